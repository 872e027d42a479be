// Drives headless Chromium through a web app's sign-in against `sharelane serve`, as a person would: it opens
// app.html from its own loopback origin, clicks the sign-in button (a real click, so the popup is not blocked),
// fills the email address into the popup the emulator's redirectURL opened, submits it, and waits for the app
// to finish its saves and queries. Chromium is driven over the DevTools pipe by Scripts/browser/cdp-pipe.mjs,
// read from the source tree as this file is.
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
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createSecureServer } from 'node:https';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium, serveOnLoopback } from '../../../Scripts/browser/cdp-pipe.mjs';

const [chromiumPath, server, apiToken, screenshot, secureOrigin] = process.argv.slice(2);
const here = dirname(fileURLToPath(import.meta.url));
const page = readFileSync(join(here, 'app.html'));
const deadline = Date.now() + 60_000;

const secureHost = secureOrigin && new URL(secureOrigin);
const browser = launchChromium(chromiumPath, {
  profilePrefix: 'sharelane-popup-', windowSize: '1000,800', deadline,
  flags: secureHost ? [`--host-resolver-rules=MAP ${secureHost.hostname} 127.0.0.1`, '--ignore-certificate-errors'] : [],
  report: (problem) => [JSON.stringify({ status: problem, steps: [] })],
});
setTimeout(() => browser.fail('timed out'), 60_000).unref();
const { evaluate, until } = browser;

const serveApp = (request, response) => {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  response.end(page);
};
// The app's own origin: localhost (serve listens on 127.0.0.1), so the two origins differ; or the https origin.
let app;
let appOrigin;
if (secureHost) {
  const key = join(browser.profile, 'app-key.pem');
  const cert = join(browser.profile, 'app-cert.pem');
  execFileSync('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1',
    '-subj', `/CN=${secureHost.hostname}`, '-addext', `subjectAltName=DNS:${secureHost.hostname}`, '-keyout', key, '-out', cert,
  ], { stdio: 'ignore' });
  app = createSecureServer({ key: readFileSync(key), cert: readFileSync(cert) }, serveApp);
  await new Promise((resolve) => app.listen(Number(secureHost.port), '127.0.0.1', resolve));
  appOrigin = secureOrigin;
} else {
  ({ server: app, origin: appOrigin } = await serveOnLoopback(serveApp));
}
browser.onFinish(() => app.close());
const nextSignInPopup = await browser.watchPages((url) => url.includes('/auth/signin'));

try {
  const appSession = await browser.open(`${appOrigin}/?server=${encodeURIComponent(server)}&token=${encodeURIComponent(apiToken)}`);
  await until('the sign-in button', () =>
    evaluate(appSession, "!document.getElementById('signin').hidden"));

  // A real click: the popup opens with the user's gesture, as CloudKit JS opens it.
  await browser.click(appSession, '#signin');
  const popup = await nextSignInPopup('the sign-in popup');
  const popupSession = await browser.attach(popup.targetId);
  await until('the sign-in form', () =>
    evaluate(popupSession, "!!document.querySelector('input[name=emailAddress]')"));
  const popupOrigin = await evaluate(popupSession, 'location.origin');
  // What the popup was told of its opener: the browser's Referer, if it sent one.
  const referer = await evaluate(popupSession, 'document.referrer');
  await browser.signIn(popupSession, 'mei@example.com', 'Mei');

  const status = await until('the app to finish', async () => {
    const text = await evaluate(appSession, "document.getElementById('status').textContent");
    return text === 'done' || text.startsWith('failed') ? text : undefined;
  });
  const steps = await evaluate(appSession,
    "[...document.querySelectorAll('#steps li')].map((li) => li.className + ' ' + li.textContent)");
  await browser.screenshot(appSession, screenshot);
  browser.finish(status === 'done' ? 0 : 1, [JSON.stringify({ status, steps, popupOrigin, appOrigin, referer })]);
} catch (error) {
  browser.fail(`error: ${error.message}`);
}
