// How an outbound message leaves the building. The outbox worker hands each queued message to one
// provider: `log` (the server log, for local use) or `http` (a JSON POST to a gateway adapter); tests
// pass their own provider to buildApp.
import type { FastifyBaseLogger } from 'fastify';

export interface OutgoingMessage {
  id: string;
  channel: 'sms' | 'email';
  recipient: string;
  body: string;
}

export interface MessageProvider {
  readonly name: string;
  /** Resolves once the provider has accepted the message; throws to have it retried later. */
  send(message: OutgoingMessage): Promise<void>;
}

/** Writes the message body (never the recipient) to the server log: for local use only. */
export function createLogProvider(log: Pick<FastifyBaseLogger, 'info'>): MessageProvider {
  return {
    name: 'log',
    async send(m) {
      log.info({ message_id: m.id, channel: m.channel }, `MESSAGE_PROVIDER=log (local use only, nothing was sent): ${m.body}`);
    },
  };
}

export interface HttpProviderOptions {
  smsUrl: URL | null;
  emailUrl: URL | null;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/**
 * POSTs `{id, channel, to, body}` as JSON to the channel's webhook, with the message id as
 * Idempotency-Key (a retry after a lost answer must not send twice). Any 2xx is accepted.
 */
export function createHttpProvider(options: HttpProviderOptions): MessageProvider {
  const post = options.fetch ?? fetch;
  return {
    name: 'http',
    async send(m) {
      const url = m.channel === 'sms' ? options.smsUrl : options.emailUrl;
      if (!url) throw new Error(`${m.channel === 'sms' ? 'SMS_WEBHOOK_URL' : 'EMAIL_WEBHOOK_URL'} is not set`);
      const res = await post(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': m.id },
        body: JSON.stringify({ id: m.id, channel: m.channel, to: m.recipient, body: m.body }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
      });
      await res.body?.cancel();
      if (!res.ok) throw new Error(`${m.channel} webhook answered ${res.status}`);
    },
  };
}
