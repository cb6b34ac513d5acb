/**
 * A pass-through HTTP proxy on 127.0.0.1 in front of a server under test, recording every request as the browser
 * sent it (method, path, headers, body) and the status the server answered. Browser tests point an SDK's host at it
 * when they need what actually left the page: Playwright shows neither the bodies of `navigator.sendBeacon` requests
 * nor whether a keepalive fetch cut short by a navigation still arrived, and both are how posthog-js sends the
 * events of a page being left. Nothing is changed on the way, in either direction, but the Host header.
 */
import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';

export interface ProxiedRequest {
  method: string;
  /** Path and query, as sent. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** The server's status; 0 while unanswered or when the server could not be reached. */
  status: number;
}

export interface RecordingProxy {
  origin: string;
  requests: ProxiedRequest[];
  close(): Promise<void>;
}

export async function recordingProxy(target: string): Promise<RecordingProxy> {
  const upstream = new URL(target);
  const requests: ProxiedRequest[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const entry: ProxiedRequest = { method: req.method ?? 'GET', path: req.url ?? '/', headers: req.headers, body: Buffer.concat(chunks), status: 0 };
      requests.push(entry);
      const out = request({
        host: upstream.hostname, port: upstream.port, method: entry.method, path: entry.path,
        headers: { ...req.headers, host: upstream.host },
      }, (answer) => {
        entry.status = answer.statusCode ?? 0;
        res.writeHead(entry.status, answer.headers);
        answer.pipe(res);
      });
      out.on('error', () => {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end('upstream unreachable');
      });
      out.end(entry.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('recording proxy: no TCP address');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
