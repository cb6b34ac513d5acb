// The console's alert texts and form (src/console/app/lib/alert-text.ts): rules in words, state tones, and the body
// a form becomes (percentages typed as percents, sent as fractions; bounds checked before anything is sent).
import t from 'tap';
import { alertBody, EMPTY_FORM, ruleText, stateTone } from '../../src/console/app/lib/alert-text.js';

t.test('rules in words', async (t) => {
  t.equal(ruleText({ condition: { type: 'absolute_value' }, threshold: { configuration: { type: 'absolute', bounds: { lower: 10, upper: 100 } } } }), 'Fires when the value is below 10 or above 100.');
  t.equal(ruleText({ condition: { type: 'relative_increase' }, threshold: { configuration: { type: 'percentage', bounds: { upper: 0.2 } } } }), 'Fires when the increase from the interval before is above 20 %.');
  t.equal(ruleText({ condition: { type: 'relative_decrease' }, threshold: { configuration: { type: 'absolute', bounds: null } } }), 'No bounds: never fires (the decrease from the interval before is watched).');
});

t.test('state tones', async (t) => {
  t.same(['Firing', 'Not firing', 'Errored', 'Snoozed'].map((s) => stateTone(s as never)), ['bad', 'ok', 'warn', 'muted']);
});

t.test('the form as an API body', async (t) => {
  t.match(alertBody({ ...EMPTY_FORM }, 5, 1), { problem: /lower bound, an upper bound/ });
  t.match(alertBody({ ...EMPTY_FORM, lower: 'ten' }, 5, 1), { problem: /numbers/ });
  t.match(alertBody({ ...EMPTY_FORM, lower: '10', upper: '5' }, 5, 1), { problem: /above the upper/ });
  const made = alertBody({ ...EMPTY_FORM, name: ' Signups ', condition: 'relative_increase', thresholdType: 'percentage', upper: '20', interval: 'hourly', webhookUrl: ' https://hooks.example/x ' }, 5, 7);
  t.same(made, {
    body: {
      insight: 5, name: 'Signups', condition: { type: 'relative_increase' },
      threshold: { configuration: { type: 'percentage', bounds: { lower: null, upper: 0.2 } } },
      config: { type: 'TrendsAlertConfig', series_index: 0 }, calculation_interval: 'hourly', subscribed_users: [7], webhook_url: 'https://hooks.example/x',
    },
  });
  t.same((alertBody({ ...EMPTY_FORM, lower: '3', notifyMe: false }, 5, 7) as { body: { subscribed_users: number[]; name: string } }).body.subscribed_users, []);
});
