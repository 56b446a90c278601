// Outbound messages: the provider interface, the `log` and `http` providers, and the outbox worker.
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../../config.js';
import { createHttpProvider, createLogProvider, type MessageProvider } from './provider.js';

export { createOutboxWorker, retryDelayMs, MAX_ATTEMPTS, type OutboxWorker, type OutboxRun } from './outbox.js';
export { createHttpProvider, createLogProvider, type MessageProvider, type OutgoingMessage } from './provider.js';

/** The provider MESSAGE_PROVIDER names. */
export function providerFromConfig(config: Pick<Config, 'messageProvider' | 'smsWebhookUrl' | 'emailWebhookUrl'>, log: FastifyBaseLogger): MessageProvider {
  return config.messageProvider === 'http'
    ? createHttpProvider({ smsUrl: config.smsWebhookUrl, emailUrl: config.emailWebhookUrl })
    : createLogProvider(log);
}
