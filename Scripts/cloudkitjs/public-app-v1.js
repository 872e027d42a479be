// A movie catalogue written with Apple's CloudKit JS 1.x, run in Node against `sharelane serve`: first as a
// Node server does it (a server-to-server key, the public database, records created with `forceUpdate` and
// found by queries with filters), then as a signed-in user whose session CloudKit JS 1.x sends as `ckSession`.
//
// It is not part of the test suite: CloudKit JS is Apple's, under Apple's licence, and is never kept in this
// repository. Scripts/cloudkitjs-check.sh starts a fresh `serve` and runs this file when the copy you give it
// is a 1.x one:
//
//   Scripts/cloudkitjs-check.sh path/to/cloudkit.js
//
// Each step prints `ok` or `FAIL` with what went wrong; the last line is `N passed, N failed`, and the exit
// code is 1 when a step failed. The app uses only CloudKit JS's public API; the one thing it adds is the
// `services.fetch` every app that points CloudKit JS elsewhere needs: a fetch that rewrites Apple's host to
// the emulator's address.
'use strict';

const fs = require('fs');

const [cloudKitPath, baseURL, apiToken, keyID, keyFile] = process.argv.slice(2);
if (!cloudKitPath || !baseURL || !apiToken || !keyID || !keyFile) {
  console.error('usage: node public-app-v1.js CLOUDKIT_JS BASE_URL API_TOKEN KEY_ID KEY_FILE');
  process.exit(2);
}
const CloudKit = require(fs.realpathSync(cloudKitPath));

const APPLE = 'https://api.apple-cloudkit.com';
const CONTAINER = 'iCloud.com.example.Movies';

// Apple's host becomes the emulator's; anything else (CloudKit JS's usage reports) is answered here and goes
// nowhere. CLOUDKITJS_TRACE=1 prints each request on standard error.
function emulatorFetch(url, options) {
  const text = String(url);
  if (process.env.CLOUDKITJS_TRACE) console.error('>', options && options.method, text, options && options.body);
  if (text.startsWith(APPLE)) return fetch(baseURL + text.slice(APPLE.length), options);
  if (text.startsWith(baseURL)) return fetch(text, options);
  return Promise.resolve(new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } }));
}

const quiet = { log() {}, info() {}, warn() {}, error() {}, debug() {} };

// The user's session: CloudKit JS 1.x reads it from the token store before each request (sending it as
// `ckSession`) and stores the next one each answer carries.
let session = null;
const authTokenStore = {
  // null, not undefined, while signed out: CloudKit JS 1.x writes what it gets into the URL, and `null` is
  // what its own stores give (serve reads the word `null` as no user; `undefined` is not a token).
  getToken: () => session,
  putToken: (_container, token) => {
    session = token;
  },
};

// The server's configuration, as a Node server's cloudkit-config.js gives it: one container, a key.
function configureServer() {
  CloudKit.configure({
    services: { fetch: emulatorFetch, logger: quiet },
    containers: [
      { containerIdentifier: CONTAINER, environment: 'development', serverToServerKeyAuth: { keyID, privateKeyFile: keyFile } },
    ],
  });
  return CloudKit.getDefaultContainer();
}

// The web app's configuration for the same container: an API token, and the user's session.
function configureUser() {
  CloudKit.configure({
    services: { fetch: emulatorFetch, logger: quiet, authTokenStore },
    containers: [{ containerIdentifier: CONTAINER, environment: 'development', apiTokenAuth: { apiToken, persist: true } }],
  });
  return CloudKit.getDefaultContainer();
}

// The emulator's stand-in for Apple's sign-in page (in a browser, CloudKit JS's popup hands the session over).
async function signIn(name, email) {
  const answer = await fetch(`${baseURL}/auth/signin?ckAPIToken=${encodeURIComponent(apiToken)}`, {
    method: 'POST',
    body: JSON.stringify({ emailAddress: email, name }),
  });
  const body = await answer.json();
  if (!body.ckWebAuthToken) throw new Error(`sign-in of ${email}: ${JSON.stringify(body)}`);
  session = body.ckWebAuthToken;
  return body.userRecordName;
}

let passed = 0;
let failed = 0;
async function step(title, body) {
  try {
    await body();
    passed += 1;
    console.log(`ok    ${title}`);
  } catch (error) {
    failed += 1;
    const reason = error && (error.reason || error.message) ? error.reason || error.message : JSON.stringify(error);
    const code = error && (error.serverErrorCode || error.ckErrorCode) ? ` [${error.serverErrorCode || error.ckErrorCode}]` : '';
    console.log(`FAIL  ${title}: ${reason}${code}`);
  }
}

function check(condition, message) {
  if (!condition) throw new Error(message);
}

// A response's records, or the first record error as a thrown error.
function records(response) {
  if (response.hasErrors) throw response.errors[0];
  return response.records;
}

// The queries a movie catalogue makes.
const byID = (recordName) => ({
  recordType: 'Movie',
  filterBy: [{ systemFieldName: 'recordName', comparator: 'EQUALS', fieldValue: { value: { recordName } } }],
});
const byTitleToken = (token) => ({
  recordType: 'Movie',
  filterBy: [{ fieldName: 'title', comparator: 'CONTAINS_ANY_TOKENS', fieldValue: { value: token } }],
});

const state = {};

async function main() {
  const server = configureServer();
  const publicDB = server.publicCloudDatabase;

  await step('server-to-server: setUpAuth reads the key', async () => {
    await server.setUpAuth();
  });
  await step('saveRecord with forceUpdate and no record name creates three movies', async () => {
    state.movies = {};
    for (const [title, description, year] of [
      ['Star Wars', 'A space opera', 1977],
      ['The Grand Budapest Hotel', 'A concierge and his lobby boy', 2014],
      ['Deadpool', 'A mercenary with a mouth', 2016],
    ]) {
      const record = {
        recordType: 'Movie',
        fields: { title: { value: title }, description: { value: description }, year: { value: year } },
      };
      const [saved] = records(await publicDB.saveRecord(record, { zoneName: undefined, operationType: 'forceUpdate' }));
      check(saved.recordName && saved.fields.title.value === title, JSON.stringify(saved));
      state.movies[title] = saved;
    }
  });
  await step('performQuery lists every movie', async () => {
    const found = records(await publicDB.performQuery({ recordType: 'Movie' }));
    check(found.length === 3, `found ${found.map((record) => record.recordName)}`);
  });
  await step("performQuery by record name before the index: Apple's refusal (Field 'recordName' is not marked queryable)", async () => {
    let refused = null;
    try {
      await publicDB.performQuery(byID(state.movies.Deadpool.recordName));
    } catch (error) {
      refused = error;
    }
    check(refused && /Field 'recordName' is not marked queryable/.test(refused.reason), `answered ${JSON.stringify(refused)}`);
  });
  await step('the developer marks ___recordID QUERYABLE (serve\'s schema/extend, as in the CloudKit Console)', async () => {
    await signIn('Developer', 'developer@example.com');
    const answer = await fetch(
      `${baseURL}/database/1/${CONTAINER}/development/public/schema/extend?ckAPIToken=${encodeURIComponent(apiToken)}` +
        `&ckWebAuthToken=${encodeURIComponent(session)}`,
      {
        method: 'POST',
        body: JSON.stringify({
          schema: { recordTypes: [{ name: 'Movie', fields: [{ name: '___recordID', type: 'REFERENCE', indexes: ['QUERYABLE'] }] }] },
        }),
      },
    );
    session = null;
    check(answer.status === 200, `schema/extend answered ${answer.status}: ${await answer.text()}`);
  });
  await step('performQuery by record name (systemFieldName EQUALS)', async () => {
    const id = state.movies.Deadpool.recordName;
    const found = records(await publicDB.performQuery(byID(id)));
    check(found.length === 1 && found[0].recordName === id, `found ${JSON.stringify(found)}`);
  });
  await step('performQuery by a word of the title (CONTAINS_ANY_TOKENS)', async () => {
    const found = records(await publicDB.performQuery(byTitleToken('star')));
    check(found.length === 1 && found[0].fields.title.value === 'Star Wars', `found ${JSON.stringify(found)}`);
  });
  await step('performQuery with a number filter, sorted', async () => {
    const found = records(
      await publicDB.performQuery({
        recordType: 'Movie',
        filterBy: [{ fieldName: 'year', comparator: 'GREATER_THAN', fieldValue: { value: 2000 } }],
        sortBy: [{ fieldName: 'year', ascending: false }],
      }),
    );
    const titles = found.map((record) => record.fields.title.value);
    check(titles.join('|') === 'Deadpool|The Grand Budapest Hotel', `found ${titles}`);
  });
  await step('an update: query by record name, change the description, saveRecord with forceUpdate', async () => {
    const [movie] = records(await publicDB.performQuery(byID(state.movies['Star Wars'].recordName)));
    movie.fields.description.value = 'Episode IV';
    const [saved] = records(await publicDB.saveRecord(movie, { zoneName: undefined, operationType: 'forceUpdate' }));
    check(saved.fields.description.value === 'Episode IV', JSON.stringify(saved.fields));
    const [read] = records(await publicDB.fetchRecord(saved.recordName));
    check(read.fields.description.value === 'Episode IV' && read.fields.title.value === 'Star Wars', JSON.stringify(read.fields));
  });
  await step('an update with a stale change tag is a CONFLICT', async () => {
    const stale = Object.assign({}, state.movies.Deadpool, { fields: { title: { value: 'Deadpool 2' } } });
    records(await publicDB.saveRecord(Object.assign({}, state.movies.Deadpool), { zoneName: undefined }));
    let refused = null;
    try {
      const response = await publicDB.saveRecord(stale, { zoneName: undefined });
      refused = response.hasErrors ? response.errors[0] : null;
    } catch (error) {
      refused = error;
    }
    check(refused && refused.serverErrorCode === 'CONFLICT', `answered ${JSON.stringify(refused)}`);
  });

  const user = configureUser();
  const userPublicDB = user.publicCloudDatabase;
  const privateDB = user.privateCloudDatabase;

  await step('signed out (ckSession=null): the public database answers a query', async () => {
    session = null;
    const found = records(await userPublicDB.performQuery(byTitleToken('hotel')));
    check(found.length === 1 && found[0].fields.title.value === 'The Grand Budapest Hotel', `found ${JSON.stringify(found)}`);
  });
  await step('signed out: the private database asks for a sign-in (AUTHENTICATION_REQUIRED)', async () => {
    let refused = null;
    try {
      await privateDB.fetchAllRecordZones();
    } catch (error) {
      refused = error;
    }
    check(refused && refused.ckErrorCode === 'AUTHENTICATION_REQUIRED' && refused.redirectURL, `answered ${JSON.stringify(refused)}`);
  });
  await step('fetchUserInfo: the signed-in user, by ckSession', async () => {
    state.alice = await signIn('Alice', 'alice@example.com');
    const info = await user.fetchUserInfo();
    check(info.userRecordName === state.alice, `got ${JSON.stringify(info)}`);
  });
  await step('the user reads the movies the server saved', async () => {
    const found = records(await userPublicDB.performQuery({ recordType: 'Movie', sortBy: [{ fieldName: 'year' }] }));
    check(found.map((record) => record.fields.year.value).join(',') === '1977,2014,2016', `found ${JSON.stringify(found)}`);
  });
  await step('the user saves a review referring to a movie, and queries reviews by that reference', async () => {
    const movie = { recordName: state.movies.Deadpool.recordName, action: 'NONE' };
    records(
      await userPublicDB.saveRecord({
        recordType: 'Review',
        recordName: 'alice-deadpool',
        fields: { movie: { value: movie }, stars: { value: 4 } },
      }),
    );
    const found = records(
      await userPublicDB.performQuery({
        recordType: 'Review',
        filterBy: [{ fieldName: 'movie', comparator: 'EQUALS', fieldValue: { value: movie } }],
      }),
    );
    check(found.length === 1 && found[0].fields.stars.value === 4, `found ${JSON.stringify(found)}`);
  });
  await step("the user may not change the server's movie (ACCESS_DENIED, whatever change tag)", async () => {
    const [movie] = records(await userPublicDB.performQuery(byID(state.movies.Deadpool.recordName)));
    const stale = Object.assign({}, movie, { recordChangeTag: 'stale', fields: { title: { value: 'Deadpool!' } } });
    for (const sent of [movie, stale]) {
      let refused = null;
      try {
        const response = await userPublicDB.saveRecord(sent);
        refused = response.hasErrors ? response.errors[0] : null;
      } catch (error) {
        refused = error;
      }
      check(refused && refused.serverErrorCode === 'ACCESS_DENIED', `answered ${JSON.stringify(refused)}`);
      check(!/tag/i.test(refused.reason) && !refused.recordChangeTag, `the refusal told the tag: ${JSON.stringify(refused)}`);
    }
  });
  await step("the user's private database: a zone whose ID names its owner, a record in it", async () => {
    const response = await privateDB.saveRecordZone({ zoneName: 'Watchlist' });
    check(!response.hasErrors, JSON.stringify(response.errors));
    const zoneID = response.zones[0].zoneID;
    check(zoneID.ownerRecordName === state.alice && zoneID.zoneType === 'REGULAR_CUSTOM_ZONE', `zoneID ${JSON.stringify(zoneID)}`);
    const [saved] = records(
      await privateDB.saveRecord(
        { recordType: 'Pick', recordName: 'tonight', fields: { movie: { value: { recordName: state.movies['Star Wars'].recordName, action: 'NONE' } } } },
        { zoneName: 'Watchlist' },
      ),
    );
    check(saved.zoneID && saved.zoneID.ownerRecordName === state.alice, `record ${JSON.stringify(saved)}`);
    const [read] = records(await privateDB.fetchRecord('tonight', { zoneName: 'Watchlist' }));
    check(read.fields.movie.value.recordName === state.movies['Star Wars'].recordName, JSON.stringify(read.fields));
  });
  await step('discoverUserInfoWithEmailAddress (an undiscoverable user: the address only)', async () => {
    const response = await user.discoverUserInfoWithEmailAddress('bob@example.com');
    check(!response.hasErrors && response.users.length === 1, JSON.stringify(response));
  });

  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
