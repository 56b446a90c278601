// A fetch for clients that must name an organization's host: Node's fetch drops a `Host` header and
// cannot resolve `*.localhost`, so this sends the Request through node:http to the URL's address with
// the given Host (what a proxy in front of the service would do).
import http from 'node:http';

export function hostFetch(host: string): (req: Request) => Promise<Response> {
  return async (req) => {
    const url = new URL(req.url);
    const body = req.body ? Buffer.from(await req.arrayBuffer()) : undefined;
    const headers: Record<string, string> = {};
    req.headers.forEach((value, name) => (headers[name] = value));
    headers.host = host;
    return new Promise((resolve, reject) => {
      const sent = http.request({ host: url.hostname, port: url.port, path: url.pathname + url.search, method: req.method, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const answer = new Headers();
          for (const [name, value] of Object.entries(res.headers)) {
            if (typeof value === 'string') answer.set(name, value);
            else if (Array.isArray(value)) for (const v of value) answer.append(name, v);
          }
          const empty = res.statusCode === 204 || res.statusCode === 304;
          resolve(new Response(empty ? null : Buffer.concat(chunks), { status: res.statusCode!, headers: answer }));
        });
        res.on('error', reject);
      });
      sent.on('error', (cause) => reject(new TypeError('fetch failed', { cause })));
      sent.end(body);
    });
  };
}
