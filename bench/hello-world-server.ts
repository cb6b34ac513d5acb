// The baseline every Quill figure is compared with (design.md §6): the same HTTP library, no routing, no
// workers, no storage. Runs in its own process so its CPU and RSS are measured like Quill's.
//
//   node dist/bench/hello-world-server.js      (prints "hello-world listening on 127.0.0.1:<port>")
//
// BENCH_PORT picks the port (default 0: a free one). SIGTERM/SIGINT close the listen socket and exit.
import uWS from 'uWebSockets.js';

// The package silently falls back to a node:http shim when its binary does not load; a baseline measured on the
// shim would flatter every ratio, so refuse to run on it (stack-notes §1a).
if (typeof (uWS as unknown as { getParts?: unknown }).getParts !== 'function') {
  console.error('hello-world: uWebSockets.js native module not loaded (fallback shim); refusing to run');
  process.exit(1);
}

// `GET /?bytes=N` answers N bytes instead: the baseline for endpoints whose answers are large (a /flags/ answer
// with 50 flags is about 14 KB, and moving it through loopback costs more than producing a 12-byte body).
const bodies = new Map<number, string>();
const app = uWS.App();
app.any('/*', (res, req) => {
  const bytes = Number(req.getQuery('bytes') ?? 0);
  if (!(bytes > 0)) return void res.end('Hello World!');
  let body = bodies.get(bytes);
  if (body === undefined) bodies.set(bytes, (body = 'x'.repeat(Math.min(bytes, 16 * 1024 * 1024))));
  res.end(body);
});

app.listen('127.0.0.1', Number(process.env.BENCH_PORT ?? 0), (socket) => {
  if (!socket) {
    console.error('hello-world: cannot listen');
    process.exit(1);
  }
  console.log(`hello-world listening on 127.0.0.1:${uWS.us_socket_local_port(socket)}`);
  // Nothing to flush: stop accepting and leave (open keep-alive connections die with the process).
  const stop = () => {
    uWS.us_listen_socket_close(socket);
    process.exit(0);
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
});
