// Runs Apple's CloudKit JS in headless Chromium against `sharelane serve`, as a person uses a web app: it
// serves browser-app.html and the given cloudkit.js from a loopback origin of its own (the file is read where
// it lies and never copied), clicks the sign-in and sign-out buttons CloudKit JS draws (real clicks, so the
// popup is not blocked), and fills the email address into the sign-in popup serve's redirectURL opens.
// Chromium is driven over the DevTools pipe (../browser/cdp-pipe.mjs).
//
//   node browser-driver.mjs CHROMIUM CLOUDKIT_JS SERVER API_TOKEN [SCREENSHOT.png]
//
// Prints one line per step of the page (`ok` or `FAIL`) and `N passed, N failed`; exits 1 when a step failed
// or the page did not finish.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium, serveOnLoopback, sleep } from '../browser/cdp-pipe.mjs';

const [chromiumPath, cloudKitPath, server, apiToken, screenshot] = process.argv.slice(2);
if (!chromiumPath || !cloudKitPath || !server || !apiToken) {
  console.error('usage: node browser-driver.mjs CHROMIUM CLOUDKIT_JS SERVER API_TOKEN [SCREENSHOT.png]');
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const page = readFileSync(join(here, 'browser-app.html'));
const library = readFileSync(cloudKitPath);
const deadline = Date.now() + 120_000;

const { server: app, origin: appOrigin } = await serveOnLoopback((request, response) => {
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

const browser = launchChromium(chromiumPath, {
  profilePrefix: 'cloudkitjs-browser-', windowSize: '1000,900', deadline,
  report: (problem) => [`FAIL  ${problem}`, '0 passed, 1 failed'],
});
browser.onFinish(() => app.close());
setTimeout(() => browser.fail('the page did not finish in 120 s'), 120_000).unref();
const { evaluate, until, click } = browser;
const nextSignInPopup = await browser.watchPages((url) => url.includes('/auth/signin'));

async function signIn(appSession, email) {
  await click(appSession, '#apple-sign-in-button');
  const popup = await nextSignInPopup('the sign-in popup');
  const name = email.split('@')[0];
  await browser.signIn(await browser.attach(popup.targetId), email, name[0].toUpperCase() + name.slice(1));
}

async function stepLines(appSession) {
  const steps = await evaluate(appSession,
    "[...document.querySelectorAll('#steps li')].map((li) => [li.className, li.textContent])");
  const lines = steps.map(([kind, text]) => `${kind === 'ok' ? 'ok  ' : 'FAIL'}  ${text}`);
  const failed = steps.filter(([kind]) => kind !== 'ok').length;
  return { lines, passed: steps.length - failed, failed };
}

try {
  const appSession = await browser.open(`${appOrigin}/?server=${encodeURIComponent(server)}&token=${encodeURIComponent(apiToken)}`);
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
  if (screenshot) await browser.screenshot(appSession, screenshot);
  const { lines, passed, failed } = await stepLines(appSession);
  const extra = status.startsWith('failed:') ? [`FAIL  ${status}`] : [];
  const failures = failed + extra.length;
  browser.finish(failures === 0 ? 0 : 1, [...lines, ...extra, `${passed} passed, ${failures} failed`]);
} catch (error) {
  browser.fail(error.message);
}
