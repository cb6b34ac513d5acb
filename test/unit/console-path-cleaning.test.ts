// The settings form's path-cleaning rules (src/console/app/lib/path-cleaning.ts): problems named per row, empty
// rows dropped, and a sample path cleaned as paths clean it (every match, rules in order).
import t from 'tap';
import { cleanPath, pathRuleProblems, rulesToSave } from '../../src/console/app/lib/path-cleaning.js';

t.test('a rule without a pattern or with an unreadable one is named; empty rows are not', async (t) => {
  const problems = pathRuleProblems([{ regex: '/user/\\d+', alias: '/user/:id' }, { regex: '', alias: '' }, { regex: ' ', alias: '/x' }, { regex: '/a(b', alias: '/a' }]);
  t.same([...problems.keys()], [2, 3]);
  t.equal(problems.get(2), 'A rule needs a pattern.');
  t.equal(problems.get(3), 'Not a regular expression: unterminated group.');
});

t.test('what is saved, and a path cleaned by the rules in order', async (t) => {
  const rules = [{ regex: '/user/\\d+', alias: '/user/:id' }, { regex: '', alias: '' }, { regex: '\\?.*$', alias: '' }];
  t.same(rulesToSave(rules), [rules[0], rules[2]]);
  t.equal(cleanPath('/user/42/settings?tab=1', rules), '/user/:id/settings');
  t.equal(cleanPath('/user/1/friends/user/2', rules), '/user/:id/friends/user/:id', 'every match');
  t.equal(cleanPath('/a', [{ regex: '(', alias: 'x' }]), '/a', 'an unreadable pattern cleans nothing');
});
