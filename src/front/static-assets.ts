/**
 * `GET /static/<name>.js`: the posthog-js browser bundles, as PostHog serves them from its asset host. The standard
 * HTML snippet loads `<api_host>/static/array.js`, and array.js loads its lazy extensions (`recorder.js`,
 * `surveys.js`, `exception-autocapture.js`, …) from the same host as `/static/<name>.js?v=<version>`, or
 * `/static/<version>/<name>.js` with `strict_script_versioning`.
 *
 * The bundles come from the posthog-js npm package Quill depends on, read once at start-up (the front does no disk
 * I/O afterwards) and answered from memory with a strong ETag (304 on `If-None-Match`), a Cache-Control (a year,
 * immutable, for the versioned path; an hour otherwise, since `array.js` changes when Quill upgrades posthog-js), and
 * a gzip copy for clients that accept it, compressed on first demand off the event loop and kept.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { gzip } from 'node:zlib';
import type { OutgoingReply } from '../http/exchange.js';

const gzipAsync = promisify(gzip);

const JS = 'application/javascript; charset=utf-8';
const CACHE_VERSIONED = 'public, max-age=31536000, immutable';
const CACHE_UNVERSIONED = 'public, max-age=3600';
/** A bundle name: letters, digits, dots and dashes (no path separators, so nothing outside the package is reachable). */
const NAME = /^[a-z0-9][a-z0-9.-]*\.js$/;

interface Asset {
  body: Buffer;
  etag: string;
  gzipped: Promise<Buffer> | null;
}

export interface AssetRequest {
  path: string;
  acceptEncoding: string;
  ifNoneMatch: string;
}

export class StaticAssets {
  private constructor(
    /** The posthog-js version the bundles belong to (the versioned path must name it). */
    readonly version: string,
    private readonly assets: ReadonlyMap<string, Asset>,
  ) {}

  /**
   * Reads the browser bundles of the installed posthog-js: every `dist/*.js` but the module builds for bundlers
   * (`module*.js`, `main.js`), which no page loads from an asset host.
   */
  static load(): StaticAssets {
    const packageJson = createRequire(import.meta.url).resolve('posthog-js/package.json');
    const version = (JSON.parse(readFileSync(packageJson, 'utf8')) as { version: string }).version;
    const dist = join(dirname(packageJson), 'dist');
    const assets = new Map<string, Asset>();
    for (const name of readdirSync(dist)) {
      if (!NAME.test(name) || name.startsWith('module') || name.startsWith('main')) continue;
      const body = readFileSync(join(dist, name));
      assets.set(name, { body, etag: createHash('sha256').update(body).digest('base64url').slice(0, 27), gzipped: null });
    }
    return new StaticAssets(version, assets);
  }

  get names(): string[] {
    return [...this.assets.keys()];
  }

  /** The answer to a `/static/…` request, or null when there is no such bundle (the caller answers 404). */
  async answer(req: AssetRequest): Promise<OutgoingReply | null> {
    const parts = req.path.slice('/static/'.length).split('/');
    let name: string;
    let versioned = false;
    if (parts.length === 1) name = parts[0]!;
    else if (parts.length === 2 && parts[0] === this.version) {
      name = parts[1]!;
      versioned = true;
    } else return null;
    const asset = this.assets.get(name);
    if (!asset) return null;

    const useGzip = acceptsGzip(req.acceptEncoding);
    // A strong ETag names one representation: the gzip copy has its own.
    const etag = useGzip ? `"${asset.etag}-gzip"` : `"${asset.etag}"`;
    const headers: Record<string, string> = {
      ETag: etag,
      'Cache-Control': versioned ? CACHE_VERSIONED : CACHE_UNVERSIONED,
      Vary: 'Accept-Encoding',
    };
    if (matches(req.ifNoneMatch, etag)) return { status: 304, body: '', headers };
    if (!useGzip) return { status: 200, body: asset.body, contentType: JS, headers };
    asset.gzipped ??= gzipAsync(asset.body, { level: 9 });
    headers['Content-Encoding'] = 'gzip';
    return { status: 200, body: await asset.gzipped, contentType: JS, headers };
  }
}

/** Whether an Accept-Encoding header admits gzip (`gzip` or `*` without `q=0`). */
export function acceptsGzip(header: string): boolean {
  for (const part of header.toLowerCase().split(',')) {
    const [coding, ...params] = part.trim().split(';');
    if (coding !== 'gzip' && coding !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    if (!q || Number(q.slice(2)) > 0) return true;
  }
  return false;
}

function matches(ifNoneMatch: string, etag: string): boolean {
  if (!ifNoneMatch) return false;
  return ifNoneMatch.split(',').some((t) => {
    const tag = t.trim();
    return tag === '*' || tag === etag || tag === `W/${etag}`;
  });
}
