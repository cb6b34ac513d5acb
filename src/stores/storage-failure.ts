/**
 * Errors that say the disk or a storage environment failed (full, read-only, I/O error, LMDB map full or panicked,
 * closed), as opposed to a fault of the data being written. They are the server's condition, not the request's:
 * a write refused for one of them answers 503 `storage_unavailable` (retry later), and the apply loop never sets an
 * event aside because of one.
 */
const STORAGE_FAILURE = /ENOSPC|EDQUOT|EIO|EROFS|ENOMEM|MDB_MAP_FULL|MDB_TXN_FULL|MDB_PANIC|no space left|input\/output error|commit failed|\bclosed\b/i;

export function isStorageFailureText(text: string): boolean {
  return STORAGE_FAILURE.test(text);
}

export function isStorageFailure(error: unknown): boolean {
  if (error === null || typeof error !== 'object') return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  return (typeof code === 'string' && isStorageFailureText(code)) || (typeof message === 'string' && isStorageFailureText(message));
}
