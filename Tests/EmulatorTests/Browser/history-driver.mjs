// A person signs in to the console of `sharelane serve` in headless Chromium twice, driven over the DevTools
// pipe by Scripts/browser/cdp-pipe.mjs (read from the source tree as this file is), in a profile the test
// reads afterwards:
//
// 1. with an address that holds the API token (`/?ckAPIToken=…`, an old bookmark), then opens the access
//    page by its link and signs out with the header's button;
// 2. by the sign-in form, typing the token, then opens the history page by its link.
//
// It then lets the browser close, so that the profile's History file is written, and keeps the profile.
//
//   node history-driver.mjs CHROMIUM SERVER API_TOKEN PROFILE_DIRECTORY
//
// Prints one JSON line: {steps, tabHistory} (the addresses Back and Forward reach), or {error}.
import { launchChromium } from '../../../Scripts/browser/cdp-pipe.mjs';

const [chromiumPath, server, apiToken, profile] = process.argv.slice(2);
const browser = launchChromium(chromiumPath, {
  profile, deadline: Date.now() + 60_000, waitAtMost: 15_000,
  report: (error) => [JSON.stringify({ error })],
});
setTimeout(() => browser.fail('timed out'), 60_000).unref();
const { send, evaluate, click } = browser;

// Waits until the tab shows `path` loaded, with a heading (`heading`, when given); returns the heading.
async function arrive(sessionId, path, heading) {
  try {
    return await browser.until(path, async () => {
      const shown = await evaluate(sessionId,
        `document.readyState === 'complete' && location.pathname === ${JSON.stringify(path)} && document.querySelector('h1')?.textContent`);
      return shown && (!heading || shown === heading) ? shown : undefined;
    });
  } catch {
    const where = await evaluate(sessionId, 'location.href + " " + document.title').catch(() => '?');
    throw new Error(`the tab did not reach ${path}; it shows ${where.replaceAll(apiToken, '***')}`);
  }
}

try {
  const steps = [];
  const sessionId = await browser.open('about:blank');
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
  // Chromium, asked to close since the profile is the test's, writes its History file before it exits.
  browser.finish(0, [JSON.stringify({ steps, tabHistory })]);
} catch (error) {
  browser.fail(error.message);
}
