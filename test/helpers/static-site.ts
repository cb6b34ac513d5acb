/**
 * A tiny static web site on 127.0.0.1 for browser tests: the files of a fixture directory, plus extra files mapped
 * by URL path (e.g. an SDK bundle from node_modules). `%NAME%` placeholders in .html and .js fixtures are replaced
 * by `vars`, so a page can name the server under test, which lives on another origin.
 */
import { createServer, type Server } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize } from 'node:path';

export interface StaticSite {
  origin: string;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'application/javascript; charset=utf-8',
};

export async function serveStaticSite(opts: { dir: string; extra?: Record<string, string>; vars?: Record<string, string> }): Promise<StaticSite> {
  const substitute = (text: string) => text.replace(/%([A-Z_]+)%/g, (whole, name: string) => opts.vars?.[name] ?? whole);
  const server: Server = createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    const extra = opts.extra?.[path];
    // normalize() + the leading-dot check keep requests inside the fixture directory.
    const relative = normalize(path === '/' ? '/index.html' : path).replace(/^\/+/, '');
    const file = extra ?? (relative.startsWith('..') ? null : join(opts.dir, relative));
    try {
      if (!file) throw new Error('outside the site');
      const bytes = await readFile(file);
      const type = TYPES[extname(file)] ?? 'application/octet-stream';
      const body = extra || !(extname(file) in TYPES) ? bytes : substitute(bytes.toString('utf8'));
      res.writeHead(200, { 'content-type': type, 'cache-control': 'no-store' });
      res.end(body);
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('static site: no TCP address');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}
