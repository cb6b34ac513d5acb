/**
 * The front ↔ worker wire codec (msgpackr), shared by both sides.
 *
 * msgpackr packs into one shared, reused buffer and returns a Node Buffer *view* of it (Buffer#slice is a view
 * too). Transferring that view's ArrayBuffer would detach msgpackr's working buffer and corrupt later messages,
 * so every message is copied into its own exact-size ArrayBuffer, which is then safe to transfer.
 */
import { Packr } from 'msgpackr';

const packr = new Packr({ useRecords: false, moreTypes: false });

export function packForTransfer(value: unknown): Uint8Array {
  return new Uint8Array(packr.pack(value));
}

export function unpack<T>(bytes: Uint8Array): T {
  return packr.unpack(bytes) as T;
}

/**
 * Packs a frame `[id, value, id, value, ...]` for transfer. Both ends send one frame per tick holding many
 * requests' data, outside any request's try/catch: should the frame not pack, the pairs are packed one by one and
 * a value that fails is replaced by what `substitute(id, error)` returns, or left out when it returns undefined,
 * so one request's data costs only that request. Null when nothing is left to send.
 */
export function packFrame(frame: readonly unknown[], substitute: (id: number, error: unknown) => unknown): Uint8Array | null {
  try {
    return packForTransfer(frame);
  } catch {
    const sendable: unknown[] = [];
    for (let i = 0; i < frame.length; i += 2) {
      const id = frame[i] as number;
      try {
        packr.pack(frame[i + 1]);
        sendable.push(id, frame[i + 1]);
      } catch (error) {
        const replacement = substitute(id, error);
        if (replacement !== undefined) sendable.push(id, replacement);
      }
    }
    return sendable.length > 0 ? packForTransfer(sendable) : null;
  }
}
