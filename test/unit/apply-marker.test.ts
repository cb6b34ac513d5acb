// The crash marker's rule (src/worker/ingest/apply-marker.ts), walked through the deaths a record can be present
// at: which ones count against it, and when it is set aside. The end-to-end case (a record whose processing kills
// the process every time) is test/e2e/apply-poison-restart.test.ts; chance kills are test/e2e/crash-soak.test.ts's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { aloneMarks, ApplyMarker, deathsOf, suspectTreatment, type ApplyMark, type MarkedRanges } from '../../src/worker/ingest/apply-marker.js';

const RANGES: MarkedRanges = { 1: [100, 180] };
const RECORD: MarkedRanges = { 1: [140, 140] };

/** What the next start reads after a death while the marker held `mark` (written and read back as the file). */
function dieWith(mark: ApplyMark): ApplyMark {
  const dir = mkdtempSync(join(tmpdir(), 'quill-marker-'));
  const { marker } = ApplyMarker.open(dir);
  marker.mark(mark);
  marker.close();
  const reopened = ApplyMarker.open(dir);
  reopened.marker.close();
  rmSync(dir, { recursive: true });
  return reopened.last!;
}

t.test('deaths in the record\'s own code: a chunk, a chunk of suspects, then three alone, then set aside', async (t) => {
  let last = dieWith({ attempts: 0, ranges: RANGES });
  t.equal(suspectTreatment(last), 'again', 'after a death in an ordinary chunk: applied again in a chunk');
  last = dieWith({ attempts: 1, ranges: RANGES });
  t.equal(suspectTreatment(last), 'alone', 'after a death in the chunk of suspects: one at a time');
  for (let own = 1; own <= 3; own++) {
    last = dieWith(aloneMarks(last, RECORD).working);
    t.equal(suspectTreatment(last), own < 3 ? 'alone' : 'set-aside', `after ${own} death(s) in its own code alone`);
  }
  t.same(last.ranges, RECORD, 'the marker names just that record');
  t.same(deathsOf(last), { deaths: 5, own: 3 }, 'five deaths in all, three of its own');
});

t.test('deaths while a record alone waits (its commits, a metadata write) do not count against it', async (t) => {
  let last = dieWith({ attempts: 1, ranges: RANGES });
  last = dieWith(aloneMarks(last, RECORD).working);
  for (let i = 0; i < 9; i++) {
    last = dieWith(aloneMarks(last, RECORD).waiting);
    t.equal(suspectTreatment(last), 'alone', `waiting death ${i + 1}: still applied alone`);
  }
  t.match(last, { attempts: 2, waits: 9 }, 'the count of its own deaths did not move');
  last = dieWith(aloneMarks(last, RECORD).working);
  t.equal(suspectTreatment(last), 'alone', 'a second death of its own: still one more chance');
  last = dieWith(aloneMarks(last, RECORD).waiting);
  t.equal(suspectTreatment(last), 'set-aside', 'the tenth death while it waited: a commit that kills every time ends too');
  t.same(deathsOf(last), { deaths: 14, own: 2 });
});

t.test('a marker from before waits were counted reads as none', async (t) => {
  const last = dieWith({ attempts: 2, ranges: RECORD });
  t.equal(last.waits, undefined);
  t.equal(suspectTreatment(last), 'alone');
  t.same(aloneMarks(last, RECORD).waiting, { attempts: 2, ranges: RECORD, waits: 1 });
});
