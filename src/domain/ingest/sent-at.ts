import { parseIsoUtc, parseTimestamp } from './timestamp.js';

/**
 * §1.7 request-level client send time, epoch ms, or null.
 * Sources in Django order, first usable one wins (Django stopped at the first *present* one even when it was
 * garbage; falling through to the next source is strictly more forgiving):
 * 1. query `_` (legacy posthog-js): digits, more than 11 → epoch ms, else epoch seconds
 * 2. body `sent_at` — object bodies only (batch envelope or single event): ISO-8601 or digits
 * 3. form field `sent_at`
 * 4. query `sent_at` (posthog-js "query" timestamp mode for POST, and Rust capture): epoch ms or ISO
 */
export function extractSentAt(
  payload: unknown,
  form: Record<string, string> | null,
  query: Record<string, string>,
): number | null {
  const underscore = query['_'];
  if (underscore) {
    const v = parseDigitsOrIso(underscore);
    if (v !== null) return v;
  }
  if (payload !== null && typeof payload === 'object' && !Array.isArray(payload)) {
    const raw = (payload as Record<string, unknown>)['sent_at'];
    if (raw) {
      const v = typeof raw === 'string' ? parseDigitsOrIso(raw) : parseTimestamp(raw);
      if (v !== null) return v;
    }
  }
  const formSentAt = form?.['sent_at'];
  if (formSentAt) {
    const v = parseDigitsOrIso(formSentAt);
    if (v !== null) return v;
  }
  const querySentAt = query['sent_at'];
  if (querySentAt) {
    const v = parseDigitsOrIso(querySentAt);
    if (v !== null) return v;
  }
  return null;
}

/** Django's rule: an all-digit string longer than 11 characters is epoch ms, otherwise epoch seconds; else ISO. */
function parseDigitsOrIso(raw: string): number | null {
  const s = raw.trim();
  if (s.length === 0) return null;
  let allDigits = true;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) {
      allDigits = false;
      break;
    }
  }
  if (allDigits) {
    const n = Number(s);
    return s.length > 11 ? n : n * 1000;
  }
  const iso = parseIsoUtc(s);
  if (!Number.isNaN(iso)) return iso;
  return parseTimestamp(s);
}
