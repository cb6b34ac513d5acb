/** One POST of a JSON body on a keep-alive agent; resolves with the status (0 when the connection failed). */
import http from 'node:http';

export function postJson(agent: http.Agent, url: URL, body: string): Promise<number> {
  return new Promise<number>((resolve) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}
