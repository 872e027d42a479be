// Runs Apple's CloudKit Catalog web app (the sample of CloudKit JS calls Apple published, kept up to date on
// CloudKit JS 2 by others) in headless Chromium against `sharelane serve`. The Catalog's files and Apple's
// cloudkit.js are read where they lie, never copied: the Catalog from a checkout or a bare git repository of
// it, its index.html served with two changes only (cloudkit.js from this origin instead of Apple's CDN, and
// catalog-shim.js first, which points CloudKit JS at serve); the code-highlighting script from the CDN is left
// out, as nothing here reaches the Internet.
//
//   node catalog-driver.mjs CHROMIUM CATALOG CLOUDKIT_JS SERVER API_TOKEN
//
// A person's part is played for real: the Run button of the authentication tab, CloudKit JS's sign-in button,
// serve's sign-in popup, and the sign-out button. Every other sample (user identity, zones, records with an
// asset, changes, the public query by distance, subscriptions, notifications) is called as its tab's Run
// button calls it, with the values its form would give. Prints one line per call (`ok` or `FAIL`, with what
// it rendered or its error and the requests it sent) and `N passed, N failed`; exits 1 when a call failed.
// CATALOG_CHECK_DEBUG=FILE.png keeps a screenshot and prints the page's state when the run stops early.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium, serveOnLoopback } from '../browser/cdp-pipe.mjs';

const [chromiumPath, catalogPath, cloudKitPath, server, apiToken] = process.argv.slice(2);
if (!chromiumPath || !catalogPath || !cloudKitPath || !server || !apiToken) {
  console.error('usage: node catalog-driver.mjs CHROMIUM CATALOG CLOUDKIT_JS SERVER API_TOKEN');
  process.exit(2);
}
const here = dirname(fileURLToPath(import.meta.url));
const shim = readFileSync(join(here, 'catalog-shim.js'));
const library = readFileSync(cloudKitPath);
const deadline = Date.now() + 180_000;

// The Catalog's file at `path`, from a checkout or from a bare repository's HEAD; undefined when missing.
const isCheckout = existsSync(join(catalogPath, 'index.html'));
function catalogFile(path) {
  try {
    if (isCheckout) {
      const file = join(catalogPath, path);
      return statSync(file).isFile() ? readFileSync(file) : undefined;
    }
    return execFileSync('git', ['--git-dir', catalogPath, 'show', `HEAD:${path}`], { stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
}
const original = catalogFile('index.html');
if (!original) {
  console.error(`catalog-driver: ${catalogPath} has no index.html (give a checkout of the CloudKit Catalog or its git directory)`);
  process.exit(2);
}
const cdnLibrary = /<script[^>]*src="https:\/\/cdn\.apple-cloudkit\.com\/ck\/[^"]*cloudkit\.js"[^>]*><\/script>/;
if (!cdnLibrary.test(original.toString())) {
  console.error("catalog-driver: the Catalog's index.html loads no cloudkit.js from Apple's CDN; this is not the page this driver knows");
  process.exit(2);
}
const index = original.toString()
  .replace(cdnLibrary, '<script async src="/cloudkit.js"></script>')
  .replace(/<script[^>]*src="https:\/\/cdn\.apple-cloudkit\.com\/cloudkit-catalog\/[^"]*"[\s\S]*?<\/script>/g, '')
  .replace(/<body>/, '<body>\n<script src="/catalog-check/shim.js"></script>');

const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.png': 'image/png', '.svg': 'image/svg+xml' };
const { server: app, origin: appOrigin } = await serveOnLoopback((request, response) => {
  const path = decodeURIComponent(request.url.split('?')[0]);
  let body;
  let type;
  if (path === '/' || path === '/index.html') [body, type] = [index, types['.html']];
  else if (path === '/cloudkit.js') [body, type] = [library, types['.js']];
  else if (path === '/catalog-check/shim.js') [body, type] = [shim, types['.js']];
  else if (!normalize(path).includes('..')) [body, type] = [catalogFile(path.slice(1)), types[extname(path)]];
  if (body === undefined) {
    response.writeHead(404);
    response.end();
    return;
  }
  response.writeHead(200, { 'content-type': `${type || 'application/octet-stream'}; charset=utf-8` });
  response.end(body);
});
const lines = [];
let passed = 0;
let failed = 0;
const browser = launchChromium(chromiumPath, {
  profilePrefix: 'cloudkit-catalog-', windowSize: '1200,900', deadline, waitAtMost: 30_000,
  report: (problem) => [...lines, `FAIL  ${problem}`, `${passed} passed, ${failed + 1} failed`],
});
browser.onFinish(() => app.close());
setTimeout(() => browser.fail('the Catalog did not finish in 180 s'), 190_000).unref();
const { send, evaluate, until } = browser;
const nextSignInPopup = await browser.watchPages((url) => url.includes('/auth/signin'));

// The Catalog scrolls its results into view after a Run: the spot is taken once it stays put.
const click = (sessionId, selector) => browser.click(sessionId, selector, { steady: true });

async function signIn(appSession, email) {
  await click(appSession, '#apple-sign-in-button');
  const popup = await nextSignInPopup('the sign-in popup');
  const name = email.split('@')[0];
  await browser.signIn(await browser.attach(popup.targetId), email, name[0].toUpperCase() + name.slice(1) + ' Appleseed');
}

let lastSession;
function record(ok, title, detail, requests) {
  if (ok) passed += 1;
  else failed += 1;
  const sent = requests && requests.length ? ` (${requests.join(', ')})` : '';
  lines.push(`${ok ? 'ok  ' : 'FAIL'}  ${title}${detail ? `: ${detail}` : ''}${ok ? '' : sent}`);
}
const short = (text) => (text.length > 160 ? `${text.slice(0, 157)}...` : text);

// One of the Catalog's samples; `expect` checks what it rendered (a word a person would look for).
async function sample(appSession, tab, title, args, expect, label) {
  const name = label || `${tab}/${title}`;
  let result;
  try {
    result = await evaluate(appSession, `catalogCheckRun(${JSON.stringify(tab)}, ${JSON.stringify(title)}, ${args})`);
  } catch (error) {
    record(false, name, error.message);
    return undefined;
  }
  if (result.ok && expect) {
    const missing = [].concat(expect).filter((word) => !result.text.includes(word));
    if (missing.length) {
      record(false, name, `rendered no ${missing.join(', ')}: ${short(result.text)}`, result.requests);
      return result;
    }
  }
  record(result.ok, name, short(result.text), result.requests);
  return result;
}

try {
  const url = `${appOrigin}/?server=${encodeURIComponent(server)}&token=${encodeURIComponent(apiToken)}`;
  const appSession = await browser.open('about:blank');
  lastSession = appSession;
  // The public query asks for the browser's position; a person allows it, here at Apple Park's gate.
  await send('Browser.grantPermissions', { origin: appOrigin, permissions: ['geolocation'] });
  await send('Emulation.setGeolocationOverride', { latitude: 37.3318, longitude: -122.0312, accuracy: 10 }, appSession);
  await send('Page.navigate', { url }, appSession);
  await until('CloudKit JS to load', () => evaluate(appSession, "typeof CloudKit !== 'undefined' && !!CloudKit.getDefaultContainer"));

  // Authentication: the tab's Run button draws CloudKit JS's button; a person signs in through serve's popup.
  await evaluate(appSession, "location.hash = '#authentication'; true");
  await click(appSession, '#run-button');
  await signIn(appSession, 'alice@example.com');
  const shown = await until('the signed-in name', () => evaluate(appSession, `(() => {
    const text = document.getElementById('username').textContent;
    return text && !text.startsWith('Unauthenticated') && text !== 'Not Authenticated' ? text : null;
  })()`)).catch((error) => error.message);
  record(shown === 'Alice ' + 'undefined' || /Alice|User record name/.test(shown), 'authentication: setUpAuth, sign in through the popup', shown);

  await sample(appSession, 'discoverability', 'fetchCurrentUserIdentity', '[]', ['UserIdentity for current discoverable user']);

  // Zones.
  await sample(appSession, 'private-zones', 'saveRecordZone', "['myCustomZone']", ['myCustomZone']);
  await sample(appSession, 'private-zones', 'fetchRecordZone', "['myCustomZone']", ['myCustomZone']);
  await sample(appSession, 'private-zones', 'fetchAllRecordZones', '[]', ['_defaultZone', 'myCustomZone']);

  // Records: the form's values (no record name: the server names it), an asset from a file, then the default zone.
  const asset = "new File(['a picture of an item'], 'item.txt', { type: 'text/plain' })";
  const location = '{ latitude: 37.3175, longitude: -122.0419 }';
  await sample(appSession, 'private-records', 'saveRecords',
    `['', '', 'myCustomZone', 'New Item', ${location}, ${asset}]`, ['Items', 'New Item'], 'private-records/saveRecords (a new record with an asset, named by the server)');
  // With no file chosen the sample sends the asset field as `{}` (its value is undefined).
  await sample(appSession, 'private-records', 'saveRecords',
    `['item-1', '', 'myCustomZone', 'No file chosen', ${location}, undefined]`, ['item-1'], 'private-records/saveRecords (no file chosen)');
  await sample(appSession, 'private-records', 'saveRecords',
    `['item-2', '', 'myCustomZone', 'Second Item', ${location}, ${asset}]`, ['item-2', 'Second Item'], 'private-records/saveRecords (named)');
  const tag = await evaluate(appSession, `CloudKit.getDefaultContainer().privateCloudDatabase
    .fetchRecords('item-2', { zoneID: 'myCustomZone' }).then((r) => r.records[0].recordChangeTag)`).catch(() => '');
  await sample(appSession, 'private-records', 'saveRecords',
    `['item-2', ${JSON.stringify(tag)}, 'myCustomZone', 'Second Item, renamed', ${location}, ${asset}]`, ['renamed'], 'private-records/saveRecords (an update with its change tag)');
  await sample(appSession, 'private-records', 'saveRecords',
    `['item-2', ${JSON.stringify(tag)}, 'myCustomZone', 'Stale', ${location}, ${asset}]`, undefined, 'private-records/saveRecords (a stale change tag is refused)')
    .then((result) => {
      // The sample throws the record's error: a refusal is what should happen, so count it the other way.
      if (!result) return;
      const last = lines.pop();
      if (last.startsWith('ok')) passed -= 1; else failed -= 1;
      record(!result.ok && /CONFLICT/.test(result.text), 'private-records/saveRecords (a stale change tag is refused)', short(result.text), result.requests);
    });
  await sample(appSession, 'private-records', 'fetchRecords', "['item-2', 'myCustomZone']", ['renamed']);
  await sample(appSession, 'private-records', 'saveRecords',
    `['item-3', '', '', 'Default-zone item', ${location}, ${asset}]`, ['item-3'], 'private-records/saveRecords (the default zone)');
  await sample(appSession, 'private-records', 'fetchRecords', "['item-3', '']", ['Default-zone item'], 'private-records/fetchRecords (the default zone)');
  for (const n of [4, 5]) {
    await evaluate(appSession, `catalogCheckRun('private-records', 'saveRecords', ['item-${n}', '', 'myCustomZone', 'Item ${n}', ${location}, ${asset}])`);
  }

  // Changes: three at a time (the sample's resultsLimit), its sync token kept, until none are left.
  // The sample calls CloudKit JS 1's fetchChangedRecords, which 2.x no longer has; the same request follows
  // through 2.x's fetchRecordZoneChanges (the sample's desiredKeys and resultsLimit, its sync token kept).
  await sample(appSession, 'private-sync', 'fetchChangedRecords', "['myCustomZone']", ['item-2']);
  const changes = (token) => `(async () => {
    const db = CloudKit.getDefaultContainer().privateCloudDatabase;
    let syncToken = ${JSON.stringify(token)};
    const pages = [];
    for (let page = 0; page < 10; page += 1) {
      const response = await db.fetchRecordZoneChanges([{ zoneID: 'myCustomZone', desiredKeys: ['name', 'location'], resultsLimit: 3, syncToken }]);
      if (response.hasErrors) throw response.errors[0];
      const zone = response.zones[0];
      pages.push(zone.records.map((r) => r.recordName + (r.deleted ? ' deleted' : '') + (r.fields && r.fields.asset ? ' with asset' : '')));
      syncToken = zone.syncToken;
      if (!zone.moreComing) break;
    }
    return { pages, syncToken };
  })()`;
  const fetched = await evaluate(appSession, changes(undefined)).catch((error) => ({ error: error.message }));
  const firstNames = (fetched.pages || []).flat();
  record(!fetched.error && fetched.pages.length === 2 && fetched.pages[0].length === 3 && firstNames.length === 4
    && !firstNames.some((name) => name.includes('asset')),
  'fetchRecordZoneChanges (2.x) with the sample\'s options: 4 records in pages of 3, desiredKeys kept (the asset left out)', fetched.error || JSON.stringify(fetched.pages));
  await sample(appSession, 'private-records', 'deleteRecords', "['item-2', 'myCustomZone']", ['item-2']);
  const after = await evaluate(appSession, changes(fetched.syncToken)).catch((error) => ({ error: error.message }));
  record(!after.error && JSON.stringify(after.pages) === JSON.stringify([['item-2 deleted']]),
    'fetchRecordZoneChanges (2.x) from the kept sync token: only the deletion', after.error || JSON.stringify(after.pages));

  // The public query: Items sorted by distance from where the browser is. One Item is put there first.
  const seeded = await evaluate(appSession, `CloudKit.getDefaultContainer().publicCloudDatabase.saveRecords([
      { recordType: 'Items', fields: { name: { value: 'Apple Park' }, location: { value: { latitude: 37.3349, longitude: -122.0090 } } } },
      { recordType: 'Items', fields: { name: { value: 'Ferry Building' }, location: { value: { latitude: 37.7955, longitude: -122.3937 } } } },
    ]).then((r) => r.hasErrors ? String(r.errors[0].reason || r.errors[0]) : 'ok', (e) => String(e.reason || e.message || e))`);
  if (seeded !== 'ok') record(false, 'public items saved for the query (not a sample)', seeded);
  const query = await sample(appSession, 'public-query', 'performQuery', '[]', ['Found 2', 'Apple Park']);
  if (query && query.ok) {
    const ordered = query.text.indexOf('Apple Park') < query.text.indexOf('Ferry Building');
    record(ordered, 'public-query/performQuery: the nearer item first', ordered ? '' : short(query.text));
  }

  // Subscriptions: one on the zone, one on a query with a filter, then fetched and deleted by ID.
  // The sample calls 1.x's saveSubscription, fetchSubscription and deleteSubscription; 2.x has the plural
  // names, through which the same subscriptions follow.
  await sample(appSession, 'private-subscriptions', 'saveSubscription', "['zone', 'myCustomZone']", ['subscriptionID'], 'private-subscriptions/saveSubscription (zone)');
  const saveSubscriptions = await evaluate(appSession, `CloudKit.getDefaultContainer().privateCloudDatabase.saveSubscriptions([
      { subscriptionType: 'zone', zoneID: { zoneName: 'myCustomZone' } },
      { subscriptionType: 'query', firesOn: ['create', 'update', 'delete'],
        query: { recordType: 'Items', filterBy: [{ fieldName: 'name', comparator: 'EQUALS', fieldValue: { value: 'New Item' } }] } },
    ]).then((r) => r.hasErrors ? 'error: ' + (r.errors[0].reason || r.errors[0]) : r.subscriptions.map((s) => s.subscriptionType).join(','),
      (e) => 'error: ' + (e.reason || e.message || e))`);
  record(saveSubscriptions === 'zone,query', 'saveSubscriptions (2.x) with the sample\'s zone and filtered query subscriptions', saveSubscriptions);
  const ids = await evaluate(appSession, `CloudKit.getDefaultContainer().privateCloudDatabase.fetchAllSubscriptions()
    .then((r) => r.subscriptions.map((s) => s.subscriptionID))`).catch(() => []);
  await sample(appSession, 'private-subscriptions', 'fetchAllSubscriptions', '[]', ids.length === 2 ? ids : ['two subscriptions']);
  if (ids[0]) {
    await sample(appSession, 'private-subscriptions', 'fetchSubscription', JSON.stringify([ids[0]]), [ids[0]]);
    await sample(appSession, 'private-subscriptions', 'deleteSubscription', JSON.stringify([ids[0]]), [ids[0]]);
    const plural = await evaluate(appSession, `(async () => {
      const db = CloudKit.getDefaultContainer().privateCloudDatabase;
      const fetched = await db.fetchSubscriptions(${JSON.stringify(ids[0])});
      if (fetched.hasErrors) return 'fetch: ' + (fetched.errors[0].reason || fetched.errors[0]);
      const deleted = await db.deleteSubscriptions(${JSON.stringify(ids[0])});
      if (deleted.hasErrors) return 'delete: ' + (deleted.errors[0].reason || deleted.errors[0]);
      const left = await db.fetchAllSubscriptions();
      return fetched.subscriptions[0].subscriptionID === ${JSON.stringify(ids[0])} && left.subscriptions.length === 1 ? 'ok' : JSON.stringify(left.subscriptions);
    })().catch((e) => String(e.reason || e.message || e))`);
    record(plural === 'ok', 'fetchSubscriptions and deleteSubscriptions (2.x): one fetched by ID, deleted, one left', plural === 'ok' ? '' : plural);
  }

  // Notifications: CloudKit JS asks for a token and parks a connection with the notification service.
  await sample(appSession, 'notifications', 'registerForNotifications', '[]', undefined);
  const registered = await evaluate(appSession, 'CloudKit.getDefaultContainer().isRegisteredForNotifications');
  record(registered === true, 'notifications: the container says it is registered', String(registered));

  await sample(appSession, 'private-zones', 'deleteRecordZone', "['myCustomZone']", ['myCustomZone']);
  await sample(appSession, 'private-zones', 'fetchAllRecordZones', '[]', ['_defaultZone'], 'private-zones/fetchAllRecordZones (after the deletion)');
  const zonesLeft = lines[lines.length - 1];
  if (zonesLeft.startsWith('ok') && zonesLeft.includes('myCustomZone')) {
    lines.pop();
    passed -= 1;
    record(false, 'private-zones/fetchAllRecordZones (after the deletion)', 'myCustomZone is still listed');
  }

  // Signing out through CloudKit JS's button: the page says so.
  await click(appSession, '#apple-sign-out-button');
  const out = await until('the signed-out name', () => evaluate(appSession, `(() => {
    const text = document.getElementById('username').textContent;
    return text.startsWith('Unauthenticated') ? text : null;
  })()`)).catch((error) => error.message);
  record(out.startsWith('Unauthenticated'), 'authentication: sign out through the button', out);

  browser.finish(failed === 0 ? 0 : 1, [...lines, `${passed} passed, ${failed} failed`]);
} catch (error) {
  if (process.env.CATALOG_CHECK_DEBUG) {
    await browser.screenshot(lastSession, process.env.CATALOG_CHECK_DEBUG).catch(() => null);
    console.error(await evaluate(lastSession, "JSON.stringify({ version: typeof CloudKit !== 'undefined' && CloudKit.VERSION, configured: window.catalogCheckConfigured, hash: location.hash, user: document.getElementById('username').textContent, signIn: (document.getElementById('apple-sign-in-button') || {}).outerHTML, requests: catalogCheckRequests, dialog: (document.querySelector('.dialog') || document.body).textContent.slice(0, 500) })").catch((e) => e.message));
  }
  browser.fail(error.message);
}
