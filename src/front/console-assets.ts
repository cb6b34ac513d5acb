/**
 * The console's static files (built by `npm run build` into dist/console, see src/console/build.ts), read once at
 * start-up and served from memory: the front does no disk I/O afterwards. The build writes a gzip and a brotli copy
 * of each text file beside it, so start-up only reads them (compressing here would cost every server start, and the
 * test suite starts dozens); a file without them is gzipped here once.
 *
 * Caching: file names carrying a content hash (`name-HASH.js`) are immutable for a year; the others (index.html,
 * the only entry a browser asks for by a fixed name) are revalidated by ETag on every load.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { packageRoot } from '../package-root.js';

export const CONSOLE_PREFIX = '/console';

export interface ConsoleAsset {
  body: Buffer;
  gzip: Buffer | null;
  brotli: Buffer | null;
  contentType: string;
  etag: string;
  cacheControl: string;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.map': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.txt': 'text/plain; charset=utf-8',
};
const COMPRESSIBLE = new Set(['.html', '.js', '.css', '.json', '.map', '.svg', '.txt']);
/** esbuild's `[name]-[hash]` names: eight upper-case letters and digits. */
const HASHED = /-[A-Z0-9]{8}\.[a-z0-9]+$/;

/** Every page of the console is rendered by index.html's script; the security headers of the HTML answer. */
export const HTML_HEADERS: Readonly<Record<string, string>> = {
  // Everything from this origin only: the console loads nothing from another host and runs no inline script.
  'Content-Security-Policy': "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  'X-Frame-Options': 'DENY',
  'Referrer-Policy': 'same-origin',
};

/** dist/console in Quill's package, whether the front runs built (dist/) or from the sources (under tests). */
export function defaultConsoleDir(): string {
  return join(packageRoot(), 'dist', 'console');
}

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else out.push(path);
  }
  return out;
}

export class ConsoleAssets {
  private constructor(private readonly files: Map<string, ConsoleAsset>) {}

  /** Loads every file of `dir`; null when the console is not built (the API still works without it). */
  static load(dir: string): ConsoleAssets | null {
    if (!existsSync(join(dir, 'index.html'))) return null;
    const files = new Map<string, ConsoleAsset>();
    for (const path of filesUnder(dir)) {
      const ext = extname(path);
      if (ext === '.gz' || ext === '.br') continue;
      const body = readFileSync(path);
      const compressible = COMPRESSIBLE.has(ext) && body.length > 256;
      const name = relative(dir, path).split(sep).join('/');
      files.set(name, {
        body,
        gzip: compressible ? (existsSync(`${path}.gz`) ? readFileSync(`${path}.gz`) : gzipSync(body, { level: 9 })) : null,
        brotli: compressible && existsSync(`${path}.br`) ? readFileSync(`${path}.br`) : null,
        contentType: TYPES[ext] ?? 'application/octet-stream',
        etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`,
        cacheControl: HASHED.test(name) ? 'public, max-age=31536000, immutable' : 'no-cache',
      });
    }
    return new ConsoleAssets(files);
  }

  /**
   * The file for a path under the prefix: an existing file, or index.html for a page address (no extension: the
   * console's client-side routes). Null for a missing file.
   */
  lookup(path: string): { name: string; asset: ConsoleAsset } | null {
    const name = path.slice(CONSOLE_PREFIX.length).replace(/^\/+/, '');
    const file = name === '' ? undefined : this.files.get(name);
    if (file) return { name, asset: file };
    if (extname(name) !== '') return null;
    return { name: 'index.html', asset: this.files.get('index.html')! };
  }

  /** Total size of the files (for the start-up log). */
  get size(): number {
    return this.files.size;
  }
}

/** Picks the encoding the client accepts: brotli, then gzip, then none. */
export function chooseEncoding(asset: ConsoleAsset, acceptEncoding: string): { body: Buffer; encoding: string | null } {
  const accepted = acceptedEncodings(acceptEncoding);
  if (asset.brotli && accepted.has('br')) return { body: asset.brotli, encoding: 'br' };
  if (asset.gzip && accepted.has('gzip')) return { body: asset.gzip, encoding: 'gzip' };
  return { body: asset.body, encoding: null };
}

/** The codings an `Accept-Encoding` header allows (q above zero; `*` allows br and gzip). */
export function acceptedEncodings(header: string): Set<string> {
  const out = new Set<string>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';').map((x) => x.trim().toLowerCase());
    if (!name) continue;
    const q = params.find((p) => p.startsWith('q='));
    if (q !== undefined && !(Number(q.slice(2)) > 0)) continue;
    if (name === '*') {
      out.add('br');
      out.add('gzip');
    } else {
      out.add(name);
    }
  }
  return out;
}
