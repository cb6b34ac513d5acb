import { Buffer } from 'node:buffer';
import { gunzipSync, unzipSync } from 'node:zlib';

import { decodeBase64Text, looksLikeBase64 } from './base64.js';
import { parseJson } from './json.js';
import { lz64Decode } from './lz-string.js';
import type { DecodeResult, RawRequest } from './types.js';

/**
 * §1.2: turn one capture / decide / flags request into its JSON payload, whatever encoding the SDK chose.
 *
 * Where the payload text is found:
 *   1. non-empty query `data` (legacy GET);
 *   2. else the body; an empty body is `no_data`;
 *   3. a urlencoded form body (by Content-Type, or a body starting `data=` as old sendBeacon text/plain bodies do)
 *      contributes its `data` field; a "form" without `data` is treated as a raw body.
 * Compression hint: query `compression`, else form `compression`, else `Content-Encoding`.
 * Decoding then works layer by layer, sniffing rather than trusting the hint, because SDKs mislabel often
 * (posthog-js 1.449 gzips without saying so; its gzip fallback sends plain JSON to a URL that may still say
 * gzip-js):
 *   - `lz64` hint → LZ-String base64 (if that fails the generic sniffing below still runs);
 *   - bytes starting 1f 8b → gunzip (this also covers Django's "retry as gzip", since every gzip member starts so);
 *   - text starting `{` / `[` → JSON (NaN/Infinity → null);
 *   - base64-looking text (spaces read as '+') → decode and start again (legacy double encoding), and if that does
 *     not parse, try it as LZ-String base64 sent without its hint;
 *   - percent-encoded base64 (Rust capture's last resort) → URL-decode, then as above;
 *   - no usable hint and still nothing → try zlib/deflate (`Content-Encoding: deflate` clients).
 * `maxBytes` bounds the raw payload and every decompressed layer (gzip/deflate/LZ bombs) → `request_too_large`.
 */
export function decodePayload(req: RawRequest, maxBytes: number): DecodeResult {
  let form: Record<string, string> | null = null;
  let text: string | null = null;
  let bytes: Buffer | null = null;

  const queryData = req.query['data'];
  if (queryData) {
    text = queryData;
  } else {
    if (req.body.byteLength === 0) return NO_DATA;
    const body = Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength);
    if (isFormBody(req.contentType, body)) {
      const parsed = parseForm(body);
      const data = parsed['data'];
      if (data !== undefined) {
        if (data.length === 0) return NO_DATA;
        form = parsed;
        text = data;
      }
    }
    if (text === null) bytes = body;
  }

  const rawLength = bytes !== null ? bytes.byteLength : Buffer.byteLength(text!, 'utf8');
  if (rawLength > maxBytes) return TOO_LARGE;

  const hint = compressionHint(req.query['compression'] || form?.['compression'] || req.contentEncoding);
  const ctx: Ctx = { maxBytes, hint };

  if (hint === 'lz64') {
    const lzText = (text ?? bytes!.toString('latin1')).trim();
    const out = lz64Decode(lzText, maxBytes);
    if (out === '') return NO_DATA;
    if (typeof out === 'string') return finish(decodeLayer(Buffer.from(out, 'utf8'), ctx, 1), form);
    if (out.error === 'too_large') return TOO_LARGE;
    // Not LZ-String after all (mislabelled): fall through to sniffing.
  }

  return finish(decodeLayer(bytes ?? Buffer.from(text!, 'utf8'), ctx, 0), form);
}

export type CompressionHint = 'none' | 'gzip' | 'lz64' | 'base64' | 'unknown';

/** §1.2 step 5, case-insensitive. `Content-Encoding` may carry a list (`gzip, identity`). */
export function compressionHint(value: string | undefined | null): CompressionHint {
  if (!value) return 'none';
  const v = value.trim().toLowerCase();
  switch (v) {
    case '':
    case 'identity':
      return 'none';
    case 'gzip':
    case 'gzip-js':
    case 'x-gzip':
      return 'gzip';
    case 'lz64':
    case 'lz-string':
      return 'lz64';
    case 'base64':
    case 'b64':
      return 'base64';
    default:
      return v.includes('gzip') ? 'gzip' : 'unknown';
  }
}

// ---------------------------------------------------------------------------------------------------------------

interface Ctx {
  maxBytes: number;
  hint: CompressionHint;
}

type LayerFail = { ok: false; code: 'invalid_payload' | 'request_too_large'; detail: string };
type LayerResult = { ok: true; value: unknown; text: string } | LayerFail;

/** Base64 inside gzip inside base64… real clients use at most two layers; the cap stops adversarial nesting. */
const MAX_DEPTH = 4;

const NO_DATA: DecodeResult = {
  ok: false,
  code: 'no_data',
  detail: 'No data found. Make sure to use a POST request when sending the payload in the body of the request.',
};
const TOO_LARGE: DecodeResult = { ok: false, code: 'request_too_large', detail: 'Request too large.' };
const TOO_LARGE_LAYER: LayerFail = { ok: false, code: 'request_too_large', detail: 'Request too large.' };

function invalid(reason: string): LayerFail {
  return { ok: false, code: 'invalid_payload', detail: `Malformed request data: ${reason}` };
}

function finish(r: LayerResult, form: Record<string, string> | null): DecodeResult {
  return r.ok ? { ok: true, payload: r.value, text: r.text, form } : r;
}

const FORM_TYPE = 'application/x-www-form-urlencoded';

function isFormBody(contentType: string, body: Buffer): boolean {
  if (contentType.length >= FORM_TYPE.length && contentType.toLowerCase().startsWith(FORM_TYPE)) return true;
  // "data=" — sendBeacon with a string body and very old clients post forms as text/plain.
  return body.length >= 5 && body[0] === 0x64 && body[1] === 0x61 && body[2] === 0x74 && body[3] === 0x61 && body[4] === 0x3d;
}

function parseForm(body: Buffer): Record<string, string> {
  const out: Record<string, string> = Object.create(null);
  // Django's QueryDict `[]` returns the last value of a repeated key; same here.
  for (const [k, v] of new URLSearchParams(body.toString('utf8'))) out[k] = v;
  return out;
}

function isGzip(buf: Buffer): boolean {
  return buf.length >= 2 && buf[0] === 0x1f && buf[1] === 0x8b;
}

type Inflated = { ok: true; buf: Buffer } | LayerFail;

function inflate(buf: Buffer, maxBytes: number, gzipOnly: boolean): Inflated {
  try {
    const out = gzipOnly ? gunzipSync(buf, { maxOutputLength: maxBytes }) : unzipSync(buf, { maxOutputLength: maxBytes });
    return { ok: true, buf: out };
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') return TOO_LARGE_LAYER;
    return invalid(`failed to decompress (${(err as Error).message})`);
  }
}

function firstNonWhitespace(text: string): number {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return c;
  }
  return -1;
}

function decodeLayer(buf: Buffer, ctx: Ctx, depth: number): LayerResult {
  if (isGzip(buf)) {
    if (depth >= MAX_DEPTH) return invalid('too many encoding layers');
    const out = inflate(buf, ctx.maxBytes, true);
    return out.ok ? decodeLayer(out.buf, ctx, depth + 1) : out;
  }

  let text = buf.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // UTF-8 BOM from some HTTP libraries
  const first = firstNonWhitespace(text);
  if (first === -1) return invalid('empty payload');
  if (first === 0x7b || first === 0x5b) {
    const parsed = parseJson(text);
    return parsed.ok ? parsed : invalid(parsed.reason);
  }

  if (depth < MAX_DEPTH) {
    let candidate = text.trim();
    if (!looksLikeBase64(candidate) && candidate.includes('%')) {
      try {
        candidate = decodeURIComponent(candidate);
      } catch {
        // not percent-encoded after all
      }
    }
    if (looksLikeBase64(candidate)) {
      const r = decodeLayer(decodeBase64Text(candidate), ctx, depth + 1);
      if (r.ok || r.code === 'request_too_large') return r;
      if (ctx.hint !== 'lz64') {
        // LZ-String's output uses the base64 alphabet too: accept it even when the hint was lost.
        const lz = lz64Decode(candidate, ctx.maxBytes);
        if (typeof lz === 'string' && lz.length > 0) {
          const again = decodeLayer(Buffer.from(lz, 'utf8'), ctx, depth + 1);
          if (again.ok || again.code === 'request_too_large') return again;
        } else if (typeof lz !== 'string' && lz.error === 'too_large') {
          return TOO_LARGE_LAYER;
        }
      }
    }
  }

  const parsed = parseJson(text);
  if (parsed.ok) return parsed;

  if (depth === 0 && (ctx.hint === 'none' || ctx.hint === 'unknown')) {
    // Django retried undecodable, unhinted bodies as compressed. gzip is sniffed above already; `unzip` also
    // recognises zlib streams (Content-Encoding: deflate).
    const out = inflate(buf, ctx.maxBytes, false);
    if (out.ok) return decodeLayer(out.buf, ctx, depth + 1);
    if (out.code === 'request_too_large') return out;
  }
  return invalid(parsed.reason);
}
