// A person signs in to the console of `sharelane serve` in headless Chromium twice, driven over the DevTools
// pipe (as popup-driver.mjs does), in a profile the test reads afterwards:
//
// 1. with an address that holds the API token (`/?ckAPIToken=…`, an old bookmark), then opens the access
//    page by its link and signs out with the header's button;
// 2. by the sign-in form, typing the token, then opens the history page by its link.
//
// It then closes the browser so that the profile's History file is written.
//
//   node history-driver.mjs CHROMIUM SERVER API_TOKEN PROFILE_DIRECTORY
//
// Prints one JSON line: {steps, tabHistory} (the addresses Back and Forward reach), or {error}.
import { spawn } from 'node:child_process';

const [chromiumPath, server, apiToken, profile] = process.argv.slice(2);
const browser = spawn(chromiumPath, [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
  '--remote-debugging-pipe', `--user-data-dir=${profile}`, 'about:blank',
], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });
let finished = false;
function finish(code, result) {
  if (finished) return;
  finished = true;
  console.log(JSON.stringify(result));
  browser.kill('SIGKILL');
  process.exit(code);
}
setTimeout(() => finish(1, { error: 'timed out' }), 60_000).unref();
let stderr = '';
browser.stderr.on('data', (chunk) => { stderr += chunk; });
const exited = new Promise((resolve) => browser.on('exit', resolve));

let nextID = 1;
const pending = new Map();
let buffered = Buffer.alloc(0);
browser.stdio[4].on('data', (chunk) => {
  buffered = Buffer.concat([buffered, chunk]);
  let end;
  while ((end = buffered.indexOf(0)) >= 0) {
    const message = JSON.parse(buffered.subarray(0, end).toString('utf8'));
    buffered = buffered.subarray(end + 1);
    if (message.id && pending.has(message.id)) {
      const { resolve, reject } = pending.get(message.id);
      pending.delete(message.id);
      if (message.error) reject(new Error(JSON.stringify(message.error)));
      else resolve(message.result);
    }
  }
});
function send(method, params = {}, sessionId) {
  const id = nextID++;
  browser.stdio[3].write(JSON.stringify({ id, method, params, sessionId }) + '\0');
  return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
}
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function evaluate(sessionId, expression) {
  const result = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
  return result.result.value;
}
// Waits until the tab shows `path` loaded, with a heading (`heading`, when given); returns the heading.
async function arrive(sessionId, path, heading) {
  for (let waited = 0; waited < 15_000; waited += 100) {
    const shown = await evaluate(sessionId,
      `document.readyState === 'complete' && location.pathname === ${JSON.stringify(path)} && document.querySelector('h1')?.textContent`)
      .catch(() => undefined);
    if (shown && (!heading || shown === heading)) return shown;
    await sleep(100);
  }
  const where = await evaluate(sessionId, 'location.href + " " + document.title').catch(() => '?');
  throw new Error(`the tab did not reach ${path}; it shows ${where.replaceAll(apiToken, '***')}`);
}
// A real click on the element `selector` selects.
async function click(sessionId, selector) {
  const box = await evaluate(sessionId, `(() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect(); return { x: r.x + r.width / 2, y: r.y + r.height / 2 }; })()`);
  for (const type of ['mousePressed', 'mouseReleased']) {
    await send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 }, sessionId);
  }
}

try {
  const steps = [];
  const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
  const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
  await send('Runtime.enable', {}, sessionId);
  await send('Page.enable', {}, sessionId);

  await send('Page.navigate', { url: `${server}/?ckAPIToken=${encodeURIComponent(apiToken)}`, transitionType: 'typed' }, sessionId);
  // The address shows `/` at once (the token taken out), the overview once the posted form signed in.
  steps.push(`${await arrive(sessionId, '/', 'Overview')} after the address with the token`);
  await click(sessionId, 'nav a[href="/access"]');
  steps.push(`${await arrive(sessionId, '/access')} by its link`);
  // The header's sign-out (a button; a link in older versions of the console).
  await click(sessionId, 'form.signout button, a.signout');
  steps.push(`signed out: ${await arrive(sessionId, '/console/signin')}`);

  await evaluate(sessionId, `document.querySelector('input[name=token]').focus()`);
  await send('Input.insertText', { text: apiToken }, sessionId);
  await click(sessionId, 'main.signin button[type=submit]');
  steps.push(`${await arrive(sessionId, '/', 'Overview')} after the sign-in form`);
  await click(sessionId, 'nav a[href="/history"]');
  steps.push(`${await arrive(sessionId, '/history')} by its link`);

  const history = await send('Page.getNavigationHistory', {}, sessionId);
  const tabHistory = history.entries.map((entry) => entry.url);
  // A clean close, so that Chromium writes its History file.
  await send('Browser.close').catch(() => {});
  await Promise.race([exited, sleep(10_000)]);
  finish(0, { steps, tabHistory });
} catch (error) {
  finish(1, { error: error.message });
}
