// Which origins may read private-API answers (src/http/cors.ts).
import t from 'tap';
import { normalizeOrigin, parseConsoleOrigins, privateOriginAllowed } from '../../src/http/cors.js';

t.test('origins are compared in their normalized form', async (t) => {
  t.equal(normalizeOrigin('HTTP://Console.Example.com:443/'), 'http://console.example.com:443');
  t.equal(normalizeOrigin('https://console.example.com:443'), 'https://console.example.com');
  t.equal(normalizeOrigin('null'), null);
  t.equal(normalizeOrigin('file:///x'), null);
  const consoles = parseConsoleOrigins(' https://console.example.com , http://localhost:3000/ ');
  t.same([...consoles], ['https://console.example.com', 'http://localhost:3000']);
  t.throws(() => parseConsoleOrigins('console.example.com'), /not an http\(s\) origin/);
  t.same([...parseConsoleOrigins(null)], []);
  t.ok(privateOriginAllowed('http://127.0.0.1:8000', 'http://127.0.0.1:8000', consoles), 'the server itself');
  t.ok(privateOriginAllowed('https://console.example.com', 'http://127.0.0.1:8000', consoles), 'a configured console');
  t.notOk(privateOriginAllowed('https://evil.example', 'http://127.0.0.1:8000', consoles));
  t.notOk(privateOriginAllowed('https://console.example.com.evil.example', 'http://127.0.0.1:8000', consoles));
  t.notOk(privateOriginAllowed('null', 'http://127.0.0.1:8000', consoles), 'sandboxed pages send "null"');
});
