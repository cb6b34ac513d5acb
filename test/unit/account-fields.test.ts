// Account field rules (src/domain/account-fields.ts): DRF CharField order and Django's EmailValidator.
import t from 'tap';
import { checkEmail, checkText, isValidEmail } from '../../src/domain/account-fields.js';

t.test('text: required, null, type, blank, length in characters, trimmed', async (t) => {
  const rule = { max: 5, required: true };
  t.same(checkText('name', undefined, rule), { problem: { attr: 'name', code: 'required', detail: 'This field is required.' } });
  t.same(checkText('name', undefined, { ...rule, required: false }), { value: undefined });
  t.same(checkText('name', null, rule), { problem: { attr: 'name', code: 'null', detail: 'This field may not be null.' } });
  t.same(checkText('name', 12, rule), { problem: { attr: 'name', code: 'invalid_input', detail: 'Not a valid string.' } });
  t.same(checkText('name', '   ', rule), { problem: { attr: 'name', code: 'blank', detail: 'This field may not be blank.' } });
  t.same(checkText('name', '  ', { ...rule, allowBlank: true }), { value: '' });
  t.same(checkText('name', 'abcdef', rule), { problem: { attr: 'name', code: 'max_length', detail: 'Ensure this field has no more than 5 characters.' } });
  t.same(checkText('name', '  abcde  ', rule), { value: 'abcde' }, 'trimmed before the length check, stored trimmed');
  t.same(checkText('name', '😀😀😀😀😀', rule), { value: '😀😀😀😀😀' }, 'five characters (ten UTF-16 units)');
});

t.test('e-mail: Django EmailValidator accepts and refuses', async (t) => {
  for (const ok of ['a@b.co', 'admin@quill.local', 'first.last+tag@sub.example.com', "o'hara@example.org", 'x@localhost', '"quoted..local"@example.com', 'a@[127.0.0.1]', 'a@[IPv6:::1]', 'user@exämple.de']) {
    t.ok(isValidEmail(ok), ok);
  }
  for (const bad of ['not an email', 'a@b', 'a@b.c', '@example.com', 'a@', 'a..b@example.com', '.a@example.com', 'a@-example.com', 'a@example-.com', 'a b@example.com', 'a@exa mple.com', 'a@[999.1.1.1]', '"quoted local"@example.com']) {
    t.notOk(isValidEmail(bad), bad);
  }
  t.same(checkEmail('email', 'not an email', true), { problem: { attr: 'email', code: 'invalid_input', detail: 'Enter a valid email address.' } });
  t.same(checkEmail('email', `${'a'.repeat(250)}@b.co`, true), { problem: { attr: 'email', code: 'max_length', detail: 'Ensure this field has no more than 254 characters.' } });
  t.same(checkEmail('email', ' a@b.co ', true), { value: 'a@b.co' });
  t.same(checkEmail('email', undefined, false), { value: undefined });
});
