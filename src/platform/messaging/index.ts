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

/**
 * Why `assent serve` must not start, or null. The `log` provider writes sign-in codes and consent-link
 * tokens into the server log: the default for local use, but a server on PostgreSQL is taken for a
 * production one, where it starts with `log` only when MESSAGE_PROVIDER=log says so (issue 34).
 */
export function messageProviderProblem(config: Pick<Config, 'databaseUrl' | 'messageProvider' | 'messageProviderExplicit'>): string | null {
  if (!config.databaseUrl || config.messageProvider !== 'log' || config.messageProviderExplicit) return null;
  return (
    'MESSAGE_PROVIDER is not set, and its default, log, writes sign-in codes and consent-link tokens to the server log. ' +
    'On PostgreSQL (DATABASE_URL) set MESSAGE_PROVIDER=http with SMS_WEBHOOK_URL (and EMAIL_WEBHOOK_URL) for production, ' +
    'or MESSAGE_PROVIDER=log to accept that for a test or staging server; see docs/operations.md'
  );
}
