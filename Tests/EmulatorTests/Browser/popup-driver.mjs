// Drives headless Chromium through a web app's sign-in against `sharelane serve`, as a person would: it opens
// app.html from its own loopback origin, clicks the sign-in button (a real click, so the popup is not blocked),
// fills the email address into the popup the emulator's redirectURL opened, submits it, and waits for the app
// to finish its saves and queries. It speaks the Chrome DevTools Protocol over the pipe Chromium opens with
// `--remote-debugging-pipe` (JSON messages ended by NUL, on file descriptors 3 and 4), which any Node has.
//
//   node popup-driver.mjs CHROMIUM SERVER API_TOKEN SCREENSHOT.png [https://NAME:PORT]
//
// With an https origin, the app is served there instead: NAME is mapped to 127.0.0.1 in Chromium
// (--host-resolver-rules), and the certificate is a self-signed one made with openssl for this run (Chromium
// is told to accept it). Under the browser's default referrer policy, the https page's popup on serve's http
// address is opened with no Referer.
//
// Prints one JSON line: {status, steps, popupOrigin, appOrigin, referer}; exits 1 when the app did not reach
// "done".
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createServer as createSecureServer } from 'node:https';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const [chromiumPath, server, apiToken, screenshot, secureOrigin] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const page = readFileSync(join(here, 'app.html'));
const deadline = Date.now() + 60_000;

const profile = mkdtempSync(join(tmpdir(), 'sharelane-popup-'));
const serveApp = (request, response) => {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  response.end(page);
};
// The app's own origin: localhost (serve listens on 127.0.0.1), so the two origins differ; or the https origin.
let app;
let appOrigin;
const extraFlags = [];
if (secureOrigin) {
  const { hostname, port } = new URL(secureOrigin);
  const key = join(profile, 'app-key.pem');
  const cert = join(profile, 'app-cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', `/CN=${hostname}`, '-addext', `subjectAltName=DNS:${hostname}`, '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  app = createSecureServer({ key: readFileSync(key), cert: readFileSync(cert) }, serveApp);
  await new Promise((resolve) => app.listen(Number(port), '127.0.0.1', resolve));
  appOrigin = secureOrigin;
  extraFlags.push(`--host-resolver-rules=MAP ${hostname} 127.0.0.1`, '--ignore-certificate-errors');
} else {
  app = createServer(serveApp);
  await new Promise((resolve) => app.listen(0, '127.0.0.1', resolve));
  appOrigin = `http://localhost:${app.address().port}`;
}

const browser = spawn(chromiumPath, [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
  '--hide-scrollbars', '--remote-debugging-pipe', `--user-data-dir=${profile}`, '--window-size=1000,800',
  ...extraFlags, 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let finished = false;
function finish(code, result) {
  if (finished) return;
  finished = true;
  console.log(JSON.stringify(result));
  browser.kill('SIGKILL');
  app.close();
  try { rmSync(profile, { recursive: true, force: true }); } catch {}
  process.exit(code);
}
setTimeout(() => finish(1, { status: 'timed out', steps: [] }), 60_000).unref();

let stderr = '';
browser.stderr.on('data', (chunk) => { stderr += chunk; });
browser.on('exit', () => finish(1, { status: `chromium exited: ${stderr.slice(-2000)}`, steps: [] }));
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

// The popup: a new page target whose URL is the emulator's sign-in page.
let popupTarget = null;
listeners.push((message) => {
  if (message.method === 'Target.targetCreated' || message.method === 'Target.targetInfoChanged') {
    const info = message.params.targetInfo;
    if (info.type === 'page' && info.url.includes('/auth/signin')) popupTarget = info;
  }
});
await send('Target.setDiscoverTargets', { discover: true });

try {
  const url = `${appOrigin}/?server=${encodeURIComponent(server)}&token=${encodeURIComponent(apiToken)}`;
  const { targetId } = await send('Target.createTarget', { url });
  const { sessionId: appSession } = await send('Target.attachToTarget', { targetId, flatten: true });
  await send('Runtime.enable', {}, appSession);
  await until('the sign-in button', () =>
    evaluate(appSession, "!document.getElementById('signin').hidden"));

  // A real click: the popup opens with the user's gesture, as CloudKit JS opens it.
  const box = await evaluate(appSession,
    "(() => { const r = document.getElementById('signin').getBoundingClientRect(); return {x: r.x + r.width / 2, y: r.y + r.height / 2}; })()");
  for (const type of ['mousePressed', 'mouseReleased']) {
    await send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 }, appSession);
  }
  const popup = await until('the sign-in popup', async () => popupTarget);
  const { sessionId: popupSession } = await send('Target.attachToTarget', { targetId: popup.targetId, flatten: true });
  await send('Runtime.enable', {}, popupSession);
  await until('the sign-in form', () =>
    evaluate(popupSession, "!!document.querySelector('input[name=emailAddress]')"));
  const popupOrigin = await evaluate(popupSession, 'location.origin');
  // What the popup was told of its opener: the browser's Referer, if it sent one.
  const referer = await evaluate(popupSession, 'document.referrer');
  await evaluate(popupSession, `(() => {
    document.querySelector('input[name=emailAddress]').value = 'mei@example.com';
    document.querySelector('input[name=name]').value = 'Mei';
    document.querySelector('form').submit();
    return true;
  })()`);

  const status = await until('the app to finish', async () => {
    const text = await evaluate(appSession, "document.getElementById('status').textContent");
    return text === 'done' || text.startsWith('failed') ? text : undefined;
  });
  const steps = await evaluate(appSession,
    "[...document.querySelectorAll('#steps li')].map((li) => li.className + ' ' + li.textContent)");
  const shot = await send('Page.captureScreenshot', { format: 'png' }, appSession);
  writeFileSync(screenshot, Buffer.from(shot.data, 'base64'));
  finish(status === 'done' ? 0 : 1, { status, steps, popupOrigin, appOrigin, referer });
} catch (error) {
  finish(1, { status: `error: ${error.message}`, steps: [] });
}
