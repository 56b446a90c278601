// Files a grievance ticket with @assent/client, retries it safely, and receives its webhook, verifying
// the Standard Webhooks signature. Needs an admin key (webhooks are managed with one) and a server that
// may deliver to this machine (WEBHOOK_ALLOW_PRIVATE=1):
//   ASSENT_API_KEY=ask_live_… node clients/typescript/examples/ticket-webhook.mjs
import http from 'node:http';
import { Webhook } from 'standardwebhooks';
import { createAssentClient, newIdempotencyKey, unwrap, wasReplayed } from '@assent/client';

const assent = createAssentClient({ baseUrl: process.env.ASSENT_URL ?? 'http://localhost:3000', apiKey: process.env.ASSENT_API_KEY });

// 1. A receiver on a free local port; it answers 2xx only to a correctly signed event.
let webhook; // the verifier, once the endpoint's secret is known
let delivered;
const arrived = new Promise((resolve) => (delivered = resolve));
const receiver = http.createServer((req, res) => {
  let body = '';
  req.on('data', (chunk) => (body += chunk));
  req.on('end', () => {
    try {
      const event = webhook.verify(body, req.headers); // throws on a wrong signature or a stale timestamp
      res.writeHead(204).end();
      delivered(event);
    } catch {
      res.writeHead(400).end();
    }
  });
});
await new Promise((resolve) => receiver.listen(0, '127.0.0.1', resolve));

// 2. Subscribe it to new tickets; the signing secret is shown only now.
const endpoint = await unwrap(
  assent.POST('/api/v1/webhooks', {
    body: { url: `http://127.0.0.1:${receiver.address().port}/assent`, events: ['grievance.created'], description: 'example receiver' },
  }),
);
webhook = new Webhook(endpoint.secret);

// 3. File a ticket. The client sends an Idempotency-Key (here our own, to show the retry below) and
//    resends with the same key by itself when an answer is lost or the server is briefly unavailable.
const body = { client_user_id: 'user-42', subject: 'Copy of my data', description: 'Please send me all personal data you hold about me.', category: 'data_access' };
const key = newIdempotencyKey();
const first = await assent.POST('/grievance', { body, params: { header: { 'Idempotency-Key': key } } });
console.log('filed', first.data.ticket_id, first.response.status);

// 4. Retry it as a caller whose connection dropped would: same key, same body. The service answers
//    with the stored answer and files nothing new.
const again = await assent.POST('/grievance', { body, params: { header: { 'Idempotency-Key': key } } });
console.log('retried', again.data.ticket_id, 'replayed:', wasReplayed(again.response), 'same ticket:', again.data.ticket_id === first.data.ticket_id);

// 5. The webhook arrives once, signed.
const timeout = setTimeout(() => {
  console.error('no webhook within 30 s (was the server started with WEBHOOK_ALLOW_PRIVATE=1?)');
  process.exit(1);
}, 30_000);
const event = await arrived;
clearTimeout(timeout);
console.log('webhook', event.type, event.data.ticket.ticket_id, 'verified');

// 6. Tidy up: remove the endpoint, close the receiver.
await unwrap(assent.DELETE('/api/v1/webhooks/{id}', { params: { path: { id: endpoint.id } } }));
receiver.close();
