// The front's flag streams without a server (src/front/flag-streams.ts): fake shared memory, fake worker answers
// and fake sinks. What the e2e test cannot reach cheaply: the ring's bound, heartbeats, slow clients dropped, and
// that nothing is polled or fetched while no stream is open.
import t from 'tap';
import { FlagStreams, RING_SIZE, SlicedSender, type FlagState, type StreamSink } from '../../src/front/flag-streams.js';
import type { SharedState } from '../../src/protocol/shared-state.js';

function fixture() {
  const slots = new Map<number, number>();
  const shared = { flagsVersion: (p: number) => slots.get(p) ?? 0 } as unknown as SharedState;
  let version = 0;
  const flags: Record<string, string> = { a: 'a0', b: 'b0' };
  let fetches = 0;
  const streams = new FlagStreams(shared, async () => {
    fetches++;
    return { version: `"v${version}"`, flags: { ...flags } } satisfies FlagState;
  });
  /** A flag write as a worker does it: the definitions change, then the slot moves. */
  const change = (key: string) => {
    version++;
    flags[key] = `${key}${version}`;
    slots.set(1, (slots.get(1) ?? 0) + 1);
  };
  return { streams, change, fetches: () => fetches };
}

class FakeSink implements StreamSink {
  out: string[] = [];
  result: 'sent' | 'buffered' | 'gone' = 'sent';
  ended: boolean | null = null;
  drained: (() => void) | null = null;
  left: (() => void) | null = null;
  write(chunk: string) {
    this.out.push(chunk);
    return this.result;
  }
  whenWritable(drained: () => void) {
    this.drained = drained;
  }
  end(drop: boolean) {
    this.ended = drop;
  }
  onClose(left: () => void) {
    this.left = left;
  }
  get text() {
    return this.out.join('');
  }
}

async function open(streams: FlagStreams, kind: 'server' | 'browser', lastEventId = ''): Promise<FakeSink & { opening: string }> {
  const sink = new FakeSink() as FakeSink & { opening: string };
  await streams.connect(1, kind, lastEventId, (opening) => {
    sink.opening = opening;
    return sink;
  });
  return sink;
}

const settle = () => new Promise((r) => setTimeout(r, 0));

t.test('changes, the ring bound and resuming', async (t) => {
  const { streams, change } = fixture();
  const s = await open(streams, 'server');
  t.match(s.opening, /^id: [0-9a-z]+-0\nevent: version\ndata: \{"version":"\\"v0\\""\}\n\n$/);
  change('a');
  streams.poll();
  await settle();
  t.match(s.text, /event: change\ndata: \{"version":"\\"v1\\"","keys":\["a"\]\}/);
  const firstId = /id: (\S+)/.exec(s.text)![1]!;

  for (let i = 0; i < RING_SIZE + 4; i++) {
    change(i % 2 ? 'a' : 'b');
    streams.poll();
    await settle();
  }
  const epoch = firstId.split('-')[0];
  const old = await open(streams, 'server', firstId);
  t.match(old.opening, /event: reset/, 'an id older than the ring: reset');
  const lastSeq = RING_SIZE + 5;
  const oldest = lastSeq - RING_SIZE + 1;
  const edge = await open(streams, 'server', `${epoch}-${oldest - 1}`);
  t.equal(edge.opening.match(/event: change/g)!.length, RING_SIZE, 'the oldest resumable id gets the whole ring');
  const recent = await open(streams, 'server', `${epoch}-${lastSeq - 2}`);
  t.equal(recent.opening.match(/event: change/g)!.length, 2);
  const browser = await open(streams, 'browser', `${epoch}-${lastSeq}`);
  t.equal(browser.opening, `id: ${epoch}-${lastSeq}\n\n`, 'an up-to-date browser: only the id');
  t.equal(streams.openStreams, 5);
  streams.closeAll();
  t.equal(streams.openStreams, 0);
  t.equal(s.ended, false, 'ended cleanly');
});

t.test('nothing is polled or fetched while no stream is open', async (t) => {
  const { streams, change, fetches } = fixture();
  const s = await open(streams, 'server');
  const before = fetches();
  s.left!();
  t.equal(streams.openStreams, 0);
  change('a');
  streams.poll();
  await settle();
  t.equal(fetches(), before, 'the moved slot of a project without streams is not followed');
  const back = await open(streams, 'server', /id: (\S+)/.exec(s.opening)![1]!);
  t.match(back.opening, /event: change\n.*"keys":\["a"\]/, 'but a client coming back hears of the change');
  streams.poll();
  await settle();
  t.equal(fetches(), before + 1, 'one fetch, at the connect');
  streams.closeAll();
});

t.test('heartbeats, and slow clients are dropped', async (t) => {
  const { streams, change } = fixture();
  const s = await open(streams, 'server');
  streams.beat(Date.now());
  t.equal(s.out.at(-1), ': ping\n\n');

  s.result = 'buffered';
  change('a');
  streams.poll();
  await settle();
  t.ok(s.drained, 'waits for the socket to drain');
  const writes = s.out.length;
  streams.beat(Date.now());
  t.equal(s.out.length, writes, 'no ping while the client is behind');
  s.drained!();
  s.result = 'sent';
  streams.beat(Date.now());
  t.equal(s.out.at(-1), ': ping\n\n', 'pings again once drained');

  s.result = 'buffered';
  change('b');
  streams.poll();
  await settle();
  streams.beat(Date.now() + 31_000);
  t.equal(s.ended, true, 'behind for 30 s: dropped');
  t.equal(streams.openStreams, 0);

  const flood = await open(streams, 'server');
  flood.result = 'buffered';
  for (let i = 0; i < 2000 && flood.ended === null; i++) {
    change(`k${i}`);
    streams.poll();
    await settle();
  }
  t.equal(flood.ended, true, 'too much waiting for it: dropped');
  t.equal(streams.openStreams, 0);
});

t.test('a fan-out to many streams is sliced, and every stream gets its events in order', async (t) => {
  const sender = new SlicedSender<{ got: number[] }>();
  const targets = Array.from({ length: 2000 }, () => ({ got: [] as number[] }));
  // Each write costs ~5 µs here (a system call in the server): 2,000 of them are ~10 ms, several slices.
  const slowly = (n: number) => (target: { got: number[] }) => {
    const until = performance.now() + 0.005;
    while (performance.now() < until);
    target.got.push(n);
  };
  sender.push(targets, slowly(1));
  sender.push(targets, slowly(2));
  const atOnce = targets.filter((x) => x.got.length > 0).length;
  t.ok(atOnce > 0 && atOnce < targets.length, `the first slice reached ${atOnce} of ${targets.length} streams, then gave the loop a turn`);
  while (sender.pending > 0) await new Promise((r) => setImmediate(r));
  t.ok(targets.every((x) => x.got.length === 2 && x.got[0] === 1 && x.got[1] === 2), 'every stream got both, in order');
});
