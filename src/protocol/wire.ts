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
