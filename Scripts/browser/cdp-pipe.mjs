// Headless Chromium driven over the Chrome DevTools Protocol on the pipe it opens with
// `--remote-debugging-pipe` (JSON messages ended by NUL, on file descriptors 3 and 4), which any Node has: no
// package to install, no port to find. The drivers that play a person in a web app against `sharelane serve`
// (Scripts/cloudkitjs, Scripts/cloudkit-catalog, Tests/EmulatorTests/Browser) import it by a relative path and
// keep only their own steps.
import { spawn } from 'node:child_process';
import { mkdtempSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// Serves a web app with `handler` on a free loopback port; its origin is localhost while serve listens on
// 127.0.0.1, so the page and serve are two origins, as in a real app.
export async function serveOnLoopback(handler) {
  const server = createServer(handler);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, origin: `http://localhost:${server.address().port}` };
}

// Starts headless Chromium in a fresh profile (a folder named from `profilePrefix` in the system's temporary
// folder, removed when the run finishes) and returns what drives it.
//
// - `profile`: a folder the caller gives instead, which is kept: for a run whose profile is read afterwards
//   (the History file Chromium writes), Chromium is asked to close, so that it writes its files, rather than
//   ended at once.
// - `windowSize`: 'WIDTH,HEIGHT'; `flags`: more of Chromium's switches.
// - `deadline`: the time (ms since the epoch) after which every wait gives up; `waitAtMost`: how long one
//   wait may take before that.
// - `report(problem)`: the lines to print when the run stops early (Chromium exited, time ran out, a step
//   threw); `fail(problem)` prints them, ends Chromium and exits 1.
export function launchChromium(chromiumPath, { profile: given, profilePrefix, windowSize, flags = [], deadline, waitAtMost = Infinity, report }) {
  const profile = given ?? mkdtempSync(join(tmpdir(), profilePrefix));
  const args = [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run',
    '--hide-scrollbars', '--remote-debugging-pipe', `--user-data-dir=${profile}`,
  ];
  if (windowSize) args.push(`--window-size=${windowSize}`);
  const browser = spawn(chromiumPath, [...args, ...flags, 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] });

  const cleanups = [];
  let finished = false;
  // Prints the run's last lines once, ends Chromium and what the driver served, and exits with `code`. The
  // profile is removed once Chromium has exited, and again while its helper processes still write to it as
  // they go: removed at once, it was often left behind. A given profile is kept, and Chromium gets up to
  // 10 s to close by itself before it is ended.
  function finish(code, lines) {
    if (finished) return;
    finished = true;
    for (const line of lines) console.log(line);
    for (const cleanup of cleanups) cleanup();
    let exiting = false;
    const removeProfileAndExit = () => {
      if (exiting) return;
      exiting = true;
      removeSingletonFolder(profile);
      if (!given) try { rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 50 }); } catch {}
      process.exit(code);
    };
    if (browser.pid === undefined || browser.exitCode !== null || browser.signalCode !== null) return removeProfileAndExit();
    browser.once('exit', removeProfileAndExit);
    const end = () => {
      setTimeout(removeProfileAndExit, 5_000);
      browser.kill('SIGKILL');
    };
    if (!given) return end();
    send('Browser.close').catch(() => {});
    setTimeout(end, 10_000);
  }
  const fail = (problem) => finish(1, report(problem));

  let stderr = '';
  browser.stderr.on('data', (chunk) => { stderr += chunk; });
  browser.on('error', (error) => fail(`chromium did not start: ${error.message}`));
  browser.on('exit', () => fail(`chromium exited: ${stderr.slice(-2000)}`));

  // The protocol: a command is answered by its id; anything else is an event for the listeners.
  const toBrowser = browser.stdio[3];
  const fromBrowser = browser.stdio[4];
  // A pipe that breaks when Chromium dies: the exit handler above says so, with what Chromium printed.
  for (const pipe of [toBrowser, fromBrowser]) pipe.on('error', () => {});
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

  // The expression's value; an exception the page threw is thrown here, with its message.
  async function evaluate(sessionId, expression) {
    const result = await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId);
    if (result.exceptionDetails) throw new Error(result.exceptionDetails.exception?.description || result.exceptionDetails.text);
    return result.result.value;
  }

  // The first truthy value `probe` gives, asked every 100 ms; a probe that throws counts as not yet.
  async function until(what, probe) {
    const limit = Math.min(deadline, Date.now() + waitAtMost);
    while (Date.now() < limit) {
      const value = await probe().catch(() => undefined);
      if (value) return value;
      await sleep(100);
    }
    throw new Error(`timed out waiting for ${what}`);
  }

  // A page target's session, with the Runtime domain on so that it can be evaluated in.
  async function attach(targetId) {
    const { sessionId } = await send('Target.attachToTarget', { targetId, flatten: true });
    await send('Runtime.enable', {}, sessionId);
    return sessionId;
  }

  async function open(url) {
    const { targetId } = await send('Target.createTarget', { url });
    return attach(targetId);
  }

  // Pages the browser opens (popups among them) whose address `matches`, each handed out once, in order:
  // the returned function waits for the next one.
  async function watchPages(matches) {
    const found = [];
    const seen = new Set();
    listeners.push((message) => {
      if (message.method === 'Target.targetCreated' || message.method === 'Target.targetInfoChanged') {
        const info = message.params.targetInfo;
        if (info.type === 'page' && matches(info.url) && !seen.has(info.targetId)) {
          seen.add(info.targetId);
          found.push(info);
        }
      }
    });
    await send('Target.setDiscoverTargets', { discover: true });
    return (what) => until(what, async () => found.shift());
  }

  // A real click (so that a popup it opens is not blocked) at the middle of what is drawn inside the element.
  // `steady`: a page that scrolls after a step (the Catalog scrolls its results into view) is clicked once
  // the spot stays put.
  async function click(sessionId, selector, { steady = false } = {}) {
    let last = '';
    const box = await until(`something to click in ${selector}`, async () => {
      const spot = await evaluate(sessionId, `(() => {
        const element = document.querySelector('${selector} *') || document.querySelector('${selector}');
        const r = element && element.getBoundingClientRect();
        return r && r.width > 0 ? { x: r.x + r.width / 2, y: r.y + r.height / 2 } : null;
      })()`);
      if (!steady) return spot;
      const same = spot && JSON.stringify(spot) === last;
      last = JSON.stringify(spot);
      if (!same) await sleep(200);
      return same ? spot : null;
    });
    for (const type of ['mousePressed', 'mouseReleased']) {
      await send('Input.dispatchMouseEvent', { type, x: box.x, y: box.y, button: 'left', clickCount: 1 }, sessionId);
    }
  }

  // serve's sign-in page, in the popup of `sessionId`: once its form is there, a person's email address and
  // name (where the form asks for one) are filled in and the form submitted.
  async function signIn(sessionId, email, name) {
    await until('the sign-in form', () => evaluate(sessionId, "!!document.querySelector('input[name=emailAddress]')"));
    await evaluate(sessionId, `(() => {
      document.querySelector('input[name=emailAddress]').value = ${JSON.stringify(email)};
      const name = document.querySelector('input[name=name]');
      if (name) name.value = ${JSON.stringify(name)};
      document.querySelector('form').submit();
      return true;
    })()`);
  }

  async function screenshot(sessionId, file) {
    const shot = await send('Page.captureScreenshot', { format: 'png' }, sessionId);
    writeFileSync(file, Buffer.from(shot.data, 'base64'));
  }

  return {
    profile, send, evaluate, until, attach, open, watchPages, click, signIn, screenshot, finish, fail,
    // Runs `cleanup` (closing a server the driver started) when the run finishes.
    onFinish: (cleanup) => cleanups.push(cleanup),
    // Hands `listener` every protocol event (a message that answers no command), as `{method, params, sessionId}`.
    onEvent: (listener) => listeners.push(listener),
  };
}

// Chromium keeps the socket that makes a second launch on the same profile join the first in a folder of
// its own in the temporary folder (`org.chromium.Chromium.XXXXXX`), linked from the profile as
// SingletonSocket; ended rather than closed, it leaves that folder behind.
function removeSingletonFolder(profile) {
  let socket;
  try { socket = readlinkSync(join(profile, 'SingletonSocket')); } catch { return; }
  const folder = dirname(socket);
  if (dirname(folder) === tmpdir() && basename(folder).startsWith('org.chromium.')) {
    try { rmSync(folder, { recursive: true, force: true }); } catch {}
  }
}
