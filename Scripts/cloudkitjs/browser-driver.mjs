// Runs Apple's CloudKit JS in headless Chromium against `sharelane serve`, as a person uses a web app: it
// serves browser-app.html and the given cloudkit.js from a loopback origin of its own (the file is read where
// it lies and never copied), clicks the sign-in and sign-out buttons CloudKit JS draws (real clicks, so the
// popup is not blocked), and fills the email address into the sign-in popup serve's redirectURL opens. It
// speaks the Chrome DevTools Protocol over the pipe Chromium opens with `--remote-debugging-pipe` (JSON
// messages ended by NUL, on file descriptors 3 and 4), which any Node has.
//
//   node browser-driver.mjs CHROMIUM CLOUDKIT_JS SERVER API_TOKEN [SCREENSHOT.png]
//
// Prints one line per step of the page (`ok` or `FAIL`) and `N passed, N failed`; exits 1 when a step failed
// or the page did not finish.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [chromiumPath, cloudKitPath, server, apiToken, screenshot] = process.argv.slice(2);
if (!chromiumPath || !cloudKitPath || !server || !apiToken) {
  console.error('usage: node browser-driver.mjs CHROMIUM CLOUDKIT_JS SERVER API_TOKEN [SCREENSHOT.png]');
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const page = readFileSync(join(here, 'browser-app.html'));
const library = readFileSync(cloudKitPath);
const deadline = Date.now() + 120_000;

const app = createServer((request, response) => {
  if (request.url === '/cloudkit.js') {
    response.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' });
    response.end(library);
  } else if (request.url === '/' || request.url.startsWith('/?')) {
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end(page);
  } else {
    response.writeHead(404);
    response.end();
  }
});
// localhost, while serve listens on 127.0.0.1: the page and serve are two origins, as in a real app.
await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve));
const appOrigin = `http://localhost:${app.address().port}`;

const profile = mkdtempSync(join(tmpdir(), 'cloudkitjs-browser-'));
const browser = spawn(chromiumPath, [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
  '--hide-scrollbars', '--remote-debugging-pipe', `--user-data-dir=${profile}`, '--window-size=1000,900',
  'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let finished = false;
function finish(code, lines) {
  if (finished) return;
  finished = true;
  for (const line of lines) console.log(line);
  browser.kill('SIGKILL');
  app.close();
  try { rmSync(profile, { recursive: true, force: true }); } catch {}
  process.exit(code);
}
setTimeout(() => finish(1, ['FAIL  the page did not finish in 120 s', '0 passed, 1 failed']), 120_000).unref();

let stderr = '';
browser.stderr.on('data', (chunk) => { stderr += chunk; });
browser.on('exit', () => finish(1, [`FAIL  chromium exited: ${stderr.slice(-2000)}`, '0 passed, 1 failed']));
const toBrowser = browser.stdio[3];
const fromBrowser = browser.stdio[4];
let nextID = 1;
const pending = new Map();
const listeners = [];
let buffered = Buffer.alloc(0);
fromBrowser.on('data', (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  let end;
  while ((end = buffered.indexOf(0)) >= 0) {
    const text = buffered.subarray(0, end).toString('utf8');
    buffered = buffered.subarray(end + 1);
    receive(JSON.parse(text));
  }
});
function receive(message) {
  if (message.id && pending.has(message.id)) {
    const { resolve, reject } = pending.get(message.id);
    pending.delete(message.id);
    if (message.error) reject(new Error(JSON.stringify(message.error)));
    else resolve(message.result);
  } else {
    for (const listener of listeners) listener(message);
  }
}
function send(method, params = {}, sessionId) {
  const id = nextID++;
  toBrowser.write(JSON.stringify({ id, method, params, sessionId }) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function evaluate(sessionId, expression) {
  const result = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
  return result.result.value;
}
async function until(what, probe) {
  while (Date.now() < deadline) {
    const value = await probe().catch(() => undefined);
    if (value) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

// Sign-in popups: new page targets on serve's sign-in page, each handled once.
const popups = [];
const seen = new Set();
listeners.push((message) => {
  if (message.method === 'Target.targetCreated' || message.method === 'Target.targetInfoChanged') {
    const info = message.params.targetInfo;
    if (info.type === 'page' && info.url.includes('/auth/signin') && !seen.has(info.targetId)) {
      seen.add(info.targetId);
      popups.push(info);
    }
  }
});
await send('Target.setDiscoverTargets', { discover: true });

// A real click at the middle of what CloudKit JS drew inside the element.
async function click(sessionId, selector) {
  const box = await until(`something to click in ${selector}`, () => evaluate(sessionId, `(() => {
    const element = document.querySelector('${selector} *') || document.querySelector('${selector}');
    const r = element && element.getBoundingClientRect();
    return r && r.width > 0 ? { x: r.x + r.width / 2, y: r.y + r.height / 2 } : null;
  })()`));
  for (const type of ['mousePressed', 'mouseReleased']) {
    await send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 }, sessionId);
  }
}

async function signIn(appSession, email) {
  await click(appSession, '#apple-sign-in-button');
  const popup = await until('the sign-in popup', async () => popups.shift());
  const { sessionId } = await send('Target.attachToTarget', { targetId: popup.targetId, flatten: true });
  await send('Runtime.enable', {}, sessionId);
  await until('the sign-in form', () => evaluate(sessionId, "!!document.querySelector('input[name=emailAddress]')"));
  const name = email.split('@')[0];
  await evaluate(sessionId, `(() => {
    document.querySelector('input[name=emailAddress]').value = ${JSON.stringify(email)};
    const name = document.querySelector('input[name=name]');
    if (name) name.value = ${JSON.stringify(name[0].toUpperCase() + name.slice(1))};
    document.querySelector('form').submit();
    return true;
  })()`);
}

async function stepLines(appSession) {
  const steps = await evaluate(appSession,
    "[...document.querySelectorAll('#steps li')].map((li) => [li.className, li.textContent])");
  const lines = steps.map(([kind, text]) => `${kind === 'ok' ? 'ok  ' : 'FAIL'}  ${text}`);
  const failed = steps.filter(([kind]) => kind !== 'ok').length;
  return { lines, passed: steps.length - failed, failed };
}

try {
  const url = `${appOrigin}/?server=${encodeURIComponent(server)}&token=${encodeURIComponent(apiToken)}`;
  const { targetId } = await send('Target.createTarget', { url });
  const { sessionId: appSession } = await send('Target.attachToTarget', { targetId, flatten: true });
  await send('Runtime.enable', {}, appSession);
  // What the page asks of its person, one request at a time, until it is done.
  let handled = '';
  let status;
  for (;;) {
    status = await until('the page', () => evaluate(appSession, "document.getElementById('status').textContent"));
    if (status === 'done' || status.startsWith('failed')) break;
    if (status === handled) {
      await sleep(100);
      continue;
    }
    if (status.startsWith('sign in as ')) {
      handled = status;
      await signIn(appSession, status.slice('sign in as '.length));
    } else if (status === 'sign out') {
      handled = status;
      await click(appSession, '#apple-sign-out-button');
    } else {
      handled = '';
      await sleep(100);
    }
  }
  if (screenshot) {
    const shot = await send('Page.captureScreenshot', { format: 'png' }, appSession);
    writeFileSync(screenshot, Buffer.from(shot.data, 'base64'));
  }
  const { lines, passed, failed } = await stepLines(appSession);
  const extra = status.startsWith('failed:') ? [`FAIL  ${status}`] : [];
  const failures = failed + extra.length;
  finish(failures === 0 ? 0 : 1, [...lines, ...extra, `${passed} passed, ${failures} failed`]);
} catch (error) {
  finish(1, [`FAIL  ${error.message}`, '0 passed, 1 failed']);
}
