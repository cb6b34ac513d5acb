// The worker's end of the front's request port with QUILL_LOG_LEVEL=debug's schema checking on: a request that
// does not follow the front→worker protocol is reported by name and answered 500, never run and never left
// unanswered; well-formed requests in the same frame are served as usual.
import { MessageChannel } from 'node:worker_threads';
import t from 'tap';
import { replyFromWire, toWire, type ReplyFrame, type TaskItem, type WireReply } from '../../src/protocol/worker-messages.js';
import { packForTransfer, unpack } from '../../src/protocol/wire.js';
import { malformation, RequestPort } from '../../src/worker/request-port.js';

const item: TaskItem = {
  op: 'flags', params: {}, principal: null, body: null, raw: new Uint8Array([123, 125]),
  meta: { method: 'POST', path: '/flags', query: {}, rawQuery: 'v=2', url: '', contentType: 'application/json', contentEncoding: '', ip: '', ifNoneMatch: '', authorization: '', now: 1 },
};

function harness(t: { teardown(fn: () => void): void }, checkFrames: boolean) {
  const { port1, port2 } = new MessageChannel();
  const ran: TaskItem[] = [];
  const reports: string[] = [];
  const frames: number[] = [];
  const port = new RequestPort(port2, async (i) => {
    ran.push(i);
    return { status: 200, body: `ran ${i.op}` };
  }, async () => {}, checkFrames, (requests) => frames.push(requests), (m) => reports.push(m));
  t.teardown(() => {
    port.close();
    port1.close();
  });
  const replies = new Map<number, { status: number; body: unknown }>();
  let wake: (() => void) | null = null;
  port1.on('message', (bytes: Uint8Array) => {
    const frame = unpack<ReplyFrame>(bytes);
    for (let i = 0; i < frame.length; i += 2) replies.set(frame[i] as number, replyFromWire(frame[i + 1] as WireReply));
    wake?.();
  });
  return {
    ran, reports, replies, frames,
    send: (frame: unknown[]) => port1.postMessage(packForTransfer(frame)),
    async repliesFor(n: number) {
      while (replies.size < n) await new Promise<void>((r) => (wake = r));
    },
  };
}

t.test('malformed requests are reported and answered 500; the rest of the frame runs', async (t) => {
  const h = harness(t, true);
  const wire = toWire(item);
  const wrongType = [...wire];
  wrongType[1] = 42; // method must be a string
  const tooShort = wire.slice(0, 5);
  h.send([1, wire, 2, wrongType, 3, tooShort, 4, wire]);
  await h.repliesFor(4);
  t.same(h.replies.get(1), { status: 200, body: 'ran flags' });
  t.same(h.replies.get(4), { status: 200, body: 'ran flags' });
  for (const id of [2, 3]) {
    t.equal(h.replies.get(id)?.status, 500, `request ${id} answered 500`);
    t.match(JSON.parse(String(h.replies.get(id)?.body)), { type: 'server_error', code: 'error' });
  }
  t.equal(h.ran.length, 2, 'only the well-formed requests ran');
  t.same(h.frames, [4], 'the apply pacer is told of every request of the frame, not of one frame');
  t.equal(h.reports.length, 2, 'each malformed request is reported');
  t.match(h.reports[0], /malformed request from the front \(frame position 2\): item \/1 /);
  t.match(h.reports[1], /malformed request from the front \(frame position 4\): item/);
});

t.test('a frame that is not a list is reported', async (t) => {
  const h = harness(t, true);
  h.send({ not: 'a frame' } as unknown as unknown[]);
  h.send([7, toWire(item)]);
  await h.repliesFor(1);
  t.same(h.reports, ['malformed request frame from the front: not an array (object)']);
  t.same([...h.replies.keys()], [7]);
});

t.test('malformation() names what is wrong', async (t) => {
  t.equal(malformation(1, toWire(item)), null);
  t.match(malformation('1', toWire(item)), /request id "1" is not an integer/);
  t.match(malformation(1, { op: 'flags' }), /^item \/ /);
});

/**
 * A port whose requests answer their own rawQuery at once, recording the order they started in; `slice` is the
 * port's `sliceIngestion` (other requests arriving, or not).
 */
function orderHarness(t: { teardown(fn: () => void): void }, slice: boolean) {
  const { port1, port2 } = new MessageChannel();
  const started: string[] = [];
  const port = new RequestPort(port2, async (i) => {
    started.push(`${i.op}:${i.meta.rawQuery}`);
    return { status: 200, body: i.meta.rawQuery };
  }, async () => {}, false, () => {}, () => {}, () => slice);
  t.teardown(() => {
    port.close();
    port1.close();
  });
  const replies = new Map<number, unknown>();
  let wake: (() => void) | null = null;
  port1.on('message', (bytes: Uint8Array) => {
    const frame = unpack<ReplyFrame>(bytes);
    for (let i = 0; i < frame.length; i += 2) replies.set(frame[i] as number, replyFromWire(frame[i + 1] as WireReply).body);
    wake?.();
  });
  return {
    started, replies,
    of: (op: string, n: number) => toWire({ ...item, op, meta: { ...item.meta, rawQuery: String(n) } }),
    send: (frame: unknown[]) => port1.postMessage(packForTransfer(frame)),
    async repliesFor(n: number) {
      while (replies.size < n) await new Promise<void>((r) => (wake = r));
    },
  };
}

t.test('ingestion requests start after the other requests of their frame, in their own order, and all are answered', async (t) => {
  const { started, replies, of, send, repliesFor } = orderHarness(t, true);
  // A frame of ingestion with every fourth request a flag evaluation, then a frame of one ingestion and one flag request.
  const first: unknown[] = [];
  for (let n = 0; n < 200; n++) first.push(n, of(n % 4 === 3 ? 'flags' : 'capture', n));
  send(first);
  send([200, of('engage', 200), 201, of('flags', 201)]);
  await repliesFor(202);
  t.equal(replies.size, 202, 'every request answered once');
  for (let n = 0; n < 202; n++) t.equal(replies.get(n), String(n), `request ${n} got its own reply`);
  const firstIngestion = started.findIndex((s) => !s.startsWith('flags'));
  // Both frames were posted at once: the second frame's flag request starts before the first frame's ingestion.
  t.same(started.slice(0, firstIngestion), [...Array.from({ length: 50 }, (_, k) => `flags:${4 * k + 3}`), 'flags:201'],
    'every flag request starts before any ingestion request, also one of a later frame');
  const ingestion = started.filter((s) => !s.startsWith('flags'));
  const expected = [...Array.from({ length: 200 }, (_, n) => n).filter((n) => n % 4 !== 3).map((n) => `capture:${n}`), 'engage:200'];
  t.same(ingestion, expected, 'ingestion requests start in arrival order');
});

t.test('with ingestion alone arriving, a frame starts its ingestion requests at once, before the next frame', async (t) => {
  const { started, of, send, repliesFor } = orderHarness(t, false);
  send([0, of('capture', 0), 1, of('flags', 1), 2, of('capture', 2)]);
  send([3, of('engage', 3), 4, of('flags', 4)]);
  await repliesFor(5);
  t.same(started, ['flags:1', 'capture:0', 'capture:2', 'flags:4', 'engage:3'], 'frame by frame, flags first within each');
});
