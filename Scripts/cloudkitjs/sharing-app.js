// An ordinary sharing app written with Apple's CloudKit JS, run in Node against `sharelane serve`.
//
// It is not part of the test suite: CloudKit JS is Apple's, under Apple's licence, and is never kept in this
// repository. Scripts/cloudkitjs-check.sh starts a fresh `serve` and runs this file with the copy you give it:
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
if (!cloudKitPath || !baseURL || !apiToken) {
  console.error('usage: node sharing-app.js CLOUDKIT_JS BASE_URL API_TOKEN [KEY_ID KEY_FILE]');
  process.exit(2);
}
const CloudKit = require(fs.realpathSync(cloudKitPath));

const APPLE = 'https://api.apple-cloudkit.com';
const CONTAINER = 'iCloud.com.example.SharingApp';
const SERVER_CONTAINER = 'iCloud.com.example.SharingApp.server';

// The shim: Apple's host becomes the emulator's, and the URLs the emulator hands out (asset uploads and
// downloads) go as they are; anything else (CloudKit JS's usage reports) is answered here and goes nowhere.
// CLOUDKITJS_TRACE=1 prints each request on standard error.
function emulatorFetch(url, options) {
  const text = String(url);
  if (process.env.CLOUDKITJS_TRACE) console.error('>', options && options.method, text, options && options.body);
  if (text.startsWith(APPLE)) return fetch(baseURL + text.slice(APPLE.length), options);
  if (text.startsWith(baseURL)) return fetch(text, options);
  return Promise.resolve(new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } }));
}

// One app, several people: the token store holds each person's web auth token, and `as(name)` chooses whose
// token CloudKit JS reads and replaces (it reads the store before every request and writes each next token).
const tokens = {};
let current = null;
const authTokenStore = {
  getToken: () => (current ? tokens[current] : undefined),
  putToken: (_container, token) => {
    if (current) tokens[current] = token;
  },
};

const quiet = { log() {}, info() {}, warn() {}, error() {}, debug() {} };
const containers = [
  {
    containerIdentifier: CONTAINER,
    environment: 'development',
    apiTokenAuth: { apiToken, persist: true },
  },
];
if (keyID && keyFile) {
  containers.push({
    containerIdentifier: SERVER_CONTAINER,
    environment: 'development',
    serverToServerKeyAuth: { keyID, privateKeyFile: keyFile },
  });
}
CloudKit.configure({ services: { fetch: emulatorFetch, authTokenStore, logger: quiet }, containers });
const container = CloudKit.getContainer(CONTAINER);

// The emulator's stand-in for Apple's sign-in: each person's first token (in a browser, the sign-in popup
// hands it over; Scripts/cloudkitjs-browser-check.sh and Tests/EmulatorTests cover that flow).
async function signIn(name, email) {
  const answer = await fetch(`${baseURL}/auth/signin?ckAPIToken=${encodeURIComponent(apiToken)}`, {
    method: 'POST',
    body: JSON.stringify({ emailAddress: email, name }),
  });
  const body = await answer.json();
  if (!body.ckWebAuthToken) throw new Error(`sign-in of ${email}: ${JSON.stringify(body)}`);
  tokens[name] = body.ckWebAuthToken;
  return body.userRecordName;
}

function as(name) {
  current = name;
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

const zoneID = { zoneName: 'Lists' };
const tripZoneID = { zoneName: 'Trips' };
const state = {};

async function main() {
  state.alice = await signIn('alice', 'alice@example.com');
  state.bob = await signIn('bob', 'bob@example.com');
  state.carol = await signIn('carol', 'carol@example.com');
  const privateDB = container.privateCloudDatabase;
  const sharedDB = container.sharedCloudDatabase;
  const publicDB = container.publicCloudDatabase;

  as('alice');
  // (setUpAuth draws CloudKit JS's sign-in button, which needs a browser's document.)
  await step('fetchCurrentUserIdentity (users/caller)', async () => {
    const identity = await container.fetchCurrentUserIdentity();
    check(identity.userRecordName === state.alice, `got ${JSON.stringify(identity)}`);
  });
  await step('saveRecordZones creates two zones', async () => {
    const response = await privateDB.saveRecordZones([zoneID, tripZoneID]);
    check(!response.hasErrors, JSON.stringify(response.errors));
    check(response.zones.length === 2, `answered ${response.zones.length} zones`);
  });
  await step('fetchAllRecordZones lists them', async () => {
    const response = await privateDB.fetchAllRecordZones();
    const names = response.zones.map((zone) => zone.zoneID.zoneName);
    check(names.includes('Lists') && names.includes('Trips'), `listed ${names}`);
  });
  await step('saveRecords: a list with a DOUBLE price of 2.5', async () => {
    const saved = records(
      await privateDB.saveRecords(
        [{ recordType: 'Item', recordName: 'milk', fields: { title: { value: 'Milk' }, price: { value: 2.5 } } }],
        { zoneID },
      ),
    );
    state.milk = saved[0];
  });
  await step('saveRecords: a whole number into that DOUBLE field, sent without a type', async () => {
    const saved = records(
      await privateDB.saveRecords(
        [{ recordType: 'Item', recordName: 'eggs', fields: { title: { value: 'Eggs' }, price: { value: 2 } } }],
        { zoneID },
      ),
    );
    check(saved[0].fields.price.type === 'DOUBLE', `price came back as ${JSON.stringify(saved[0].fields.price)}`);
  });
  await step('saveRecords refuses a fraction for an INT64 field', async () => {
    await privateDB.saveRecords(
      [{ recordType: 'Item', recordName: 'bread', fields: { title: { value: 'Bread' }, count: { value: 1 } } }],
      { zoneID },
    );
    let refused = false;
    try {
      const response = await privateDB.saveRecords(
        [{ recordType: 'Item', recordName: 'butter', fields: { count: { value: 1.5 } } }],
        { zoneID },
      );
      refused = response.hasErrors;
    } catch (error) {
      refused = true;
    }
    check(refused, 'a fraction was taken for an INT64 field');
  });
  await step('fetchRecords reads a record back', async () => {
    const [record] = records(await privateDB.fetchRecords([{ recordName: 'milk' }], { zoneID }));
    check(record.fields.title.value === 'Milk', JSON.stringify(record.fields));
  });
  await step('performQuery sorts by price', async () => {
    const response = await privateDB.performQuery(
      { recordType: 'Item', sortBy: [{ fieldName: 'price', ascending: true }] },
      { zoneID },
    );
    check(response.records.length >= 2, `found ${response.records.length}`);
  });
  await step('a zone-wide share inviting Bob (read-write)', async () => {
    const [share] = records(
      await privateDB.saveRecords(
        [
          {
            recordType: 'cloudkit.share',
            recordName: 'cloudkit.zoneshare',
            fields: { 'cloudkit.title': { value: 'Groceries' } },
            publicPermission: 'NONE',
            participants: [
              {
                userIdentity: { lookupInfo: { emailAddress: 'bob@example.com' } },
                permission: 'READ_WRITE',
                type: 'USER',
                acceptanceStatus: 'INVITED',
              },
            ],
          },
        ],
        { zoneID },
      ),
    );
    state.zoneShare = share;
    check(share.shortGUID, `the share came back without a shortGUID: ${JSON.stringify(share)}`);
  });
  await step("the share lists its owner among its participants", async () => {
    const owner = (state.zoneShare.participants || []).find((p) => p.type === 'OWNER');
    check(owner, `participants: ${JSON.stringify(state.zoneShare.participants)}`);
    check(owner.userIdentity.userRecordName === state.alice, `owner entry ${JSON.stringify(owner)}`);
    check(owner.permission === 'READ_WRITE', `owner permission ${owner.permission}`);
    check(owner.acceptanceStatus === 'ACCEPTED', `owner status ${owner.acceptanceStatus}`);
  });
  await step('a hierarchy share saved before its root, in one request', async () => {
    const [root] = records(
      await privateDB.saveRecords([{ recordType: 'Trip', recordName: 'italy', fields: { name: { value: 'Italy' } } }], {
        zoneID: tripZoneID,
      }),
    );
    records(
      await privateDB.saveRecords(
        [{ recordType: 'Cost', recordName: 'hotel', fields: { amount: { value: 420.5 } }, parent: { recordName: 'italy' } }],
        { zoneID: tripZoneID },
      ),
    );
    const share = {
      recordType: 'cloudkit.share',
      recordName: 'italy-share',
      forRecord: root,
      fields: { 'cloudkit.title': { value: 'Italy' } },
      publicPermission: 'NONE',
      participants: [
        {
          userIdentity: { lookupInfo: { emailAddress: 'bob@example.com' } },
          permission: 'READ_ONLY',
          type: 'USER',
          acceptanceStatus: 'INVITED',
        },
      ],
    };
    const updatedRoot = Object.assign({}, root, { share: { recordName: 'italy-share' } });
    const saved = records(await privateDB.saveRecords([share, updatedRoot], { zoneID: tripZoneID }));
    state.tripShare = saved[0];
    check(saved[1].share && saved[1].share.recordName === 'italy-share', `root: ${JSON.stringify(saved[1])}`);
  });

  as('bob');
  await step('Bob looks the share up by its short GUID (records/resolve)', async () => {
    const response = await container.fetchRecordInfos([state.zoneShare.shortGUID]);
    check(!response.hasErrors, JSON.stringify(response.errors));
    check(response.results.length === 1, JSON.stringify(response.results));
  });
  await step('Bob accepts both shares (records/accept)', async () => {
    const response = await container.acceptShares([state.zoneShare.shortGUID, state.tripShare.shortGUID]);
    check(!response.hasErrors, JSON.stringify(response.errors));
    check(response.results.length === 2, `${response.results.length} results`);
  });
  await step("Bob's shared database lists Alice's zones", async () => {
    const response = await sharedDB.fetchAllRecordZones();
    const names = response.zones.map((zone) => zone.zoneID.zoneName);
    check(names.includes('Lists') && names.includes('Trips'), `listed ${names}`);
    state.sharedListsZone = response.zones.find((zone) => zone.zoneID.zoneName === 'Lists').zoneID;
    state.sharedTripsZone = response.zones.find((zone) => zone.zoneID.zoneName === 'Trips').zoneID;
  });
  await step('Bob reads a shared record', async () => {
    const [record] = records(await sharedDB.fetchRecords([{ recordName: 'milk' }], { zoneID: state.sharedListsZone }));
    check(record.fields.title.value === 'Milk', JSON.stringify(record));
  });
  await step('Bob adds a record to the shared zone', async () => {
    records(
      await sharedDB.saveRecords(
        [{ recordType: 'Item', recordName: 'apples', fields: { title: { value: 'Apples' }, price: { value: 3 } } }],
        { zoneID: state.sharedListsZone },
      ),
    );
  });
  await step('Bob reads the shared hierarchy', async () => {
    const [record] = records(await sharedDB.fetchRecords([{ recordName: 'hotel' }], { zoneID: state.sharedTripsZone }));
    check(record.fields.amount.value === 420.5, JSON.stringify(record));
  });
  await step('Bob (read-only) cannot change the hierarchy', async () => {
    let refused = false;
    try {
      const response = await sharedDB.saveRecords(
        [{ recordType: 'Cost', recordName: 'taxi', fields: { amount: { value: 30 } }, parent: { recordName: 'italy' } }],
        { zoneID: state.sharedTripsZone },
      );
      refused = response.hasErrors;
    } catch (error) {
      refused = true;
    }
    check(refused, 'a read-only participant wrote');
  });
  await step("Bob's shared database change feed lists the zones", async () => {
    const response = await sharedDB.fetchDatabaseChanges();
    const names = response.zones.map((zone) => zone.zoneID.zoneName);
    check(names.includes('Lists') && names.includes('Trips'), `listed ${names}`);
  });
  await step("Bob's zone change feed of the shared hierarchy", async () => {
    const response = await sharedDB.fetchRecordZoneChanges([{ zoneID: state.sharedTripsZone }]);
    const names = response.zones[0].records.map((record) => record.recordName).sort();
    check(names.includes('italy') && names.includes('hotel'), `changes: ${names}`);
  });
  await step('Bob queries the shared zone', async () => {
    const response = await sharedDB.performQuery({ recordType: 'Item' }, { zoneID: state.sharedListsZone });
    check(response.records.length === 4, `found ${response.records.length}`);
  });

  as('carol');
  await step('Carol, not invited, is refused', async () => {
    let refused = false;
    try {
      const response = await sharedDB.fetchRecords([{ recordName: 'milk' }], { zoneID: state.sharedListsZone });
      refused = response.hasErrors;
    } catch (error) {
      refused = true;
    }
    check(refused, 'Carol read a record of a zone not shared with her');
  });

  as('alice');
  await step('fetchDatabaseChanges lists the changed zones', async () => {
    const response = await privateDB.fetchDatabaseChanges();
    const names = response.zones.map((zone) => zone.zoneID.zoneName);
    check(names.includes('Lists'), `listed ${names}`);
  });
  await step("fetchRecordZoneChanges sees Bob's record", async () => {
    const response = await privateDB.fetchRecordZoneChanges([{ zoneID }]);
    const names = response.zones[0].records.map((record) => record.recordName);
    check(names.includes('apples'), `changes: ${names}`);
  });
  await step('saveSubscriptions and fetchAllSubscriptions', async () => {
    const saved = await privateDB.saveSubscriptions([
      { subscriptionType: 'zone', zoneID, subscriptionID: 'lists-changes' },
    ]);
    check(!saved.hasErrors, JSON.stringify(saved.errors));
    const listed = await privateDB.fetchAllSubscriptions();
    check(listed.subscriptions.some((s) => s.subscriptionID === 'lists-changes'), JSON.stringify(listed.subscriptions));
  });
  await step('registerForNotifications: a change to the zone arrives as a notification', async () => {
    await container.registerForNotifications();
    const arrived = new Promise((resolve) => {
      container.addNotificationListener((notification) => resolve(notification));
    });
    records(
      await privateDB.saveRecords([{ recordType: 'Item', recordName: 'tea', fields: { title: { value: 'Tea' } } }], {
        zoneID,
      }),
    );
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('no notification in 10 s')), 10000));
    const notification = await Promise.race([arrived, timeout]);
    check(notification.subscriptionID === 'lists-changes', `notification: ${JSON.stringify(notification)}`);
    await container.unregisterForNotifications();
  });
  await step('deleteSubscriptions', async () => {
    const deleted = await privateDB.deleteSubscriptions(['lists-changes']);
    check(!deleted.hasErrors, JSON.stringify(deleted.errors));
    const listed = await privateDB.fetchAllSubscriptions();
    check(!listed.subscriptions.some((s) => s.subscriptionID === 'lists-changes'), JSON.stringify(listed.subscriptions));
  });
  await step('deleteRecords', async () => {
    const response = await privateDB.deleteRecords([{ recordName: 'bread' }], { zoneID });
    check(!response.hasErrors, JSON.stringify(response.errors));
    const after = await privateDB.fetchRecords([{ recordName: 'bread' }], { zoneID });
    check(after.hasErrors && after.errors[0].serverErrorCode === 'NOT_FOUND', 'bread is still there');
  });
  await step('an asset from a Buffer (assets/upload, then the record)', async () => {
    const [record] = records(
      await privateDB.saveRecords(
        [{ recordType: 'Photo', recordName: 'receipt', fields: { image: { value: Buffer.from('receipt bytes') } } }],
        { zoneID },
      ),
    );
    check(record.fields.image && record.fields.image.value.downloadURL, JSON.stringify(record.fields));
    state.downloadURL = record.fields.image.value.downloadURL;
  });
  await step('the asset downloads', async () => {
    const answer = await emulatorFetch(state.downloadURL);
    check((await answer.text()) === 'receipt bytes', `status ${answer.status}`);
  });
  await step('a LOCATION field is queried by distance before any schema is written', async () => {
    records(
      await privateDB.saveRecords(
        [
          { recordType: 'Place', recordName: 'rome', fields: { where: { value: { latitude: 41.9, longitude: 12.5 } } } },
          { recordType: 'Place', recordName: 'oslo', fields: { where: { value: { latitude: 59.9, longitude: 10.7 } } } },
        ],
        { zoneID },
      ),
    );
    const response = await privateDB.performQuery(
      {
        recordType: 'Place',
        filterBy: [
          {
            fieldName: 'where',
            comparator: 'NEAR',
            fieldValue: { value: { latitude: 41.89, longitude: 12.49 } },
            distance: 100000,
          },
        ],
      },
      { zoneID },
    );
    const names = response.records.map((record) => record.recordName);
    check(names.length === 1 && names[0] === 'rome', `found ${names}`);
  });
  await step('discoverUserIdentityWithEmailAddress (an undiscoverable user: lookupInfo only)', async () => {
    const response = await container.discoverUserIdentityWithEmailAddress('bob@example.com');
    check(response.users.length === 1, JSON.stringify(response));
  });
  await step('the public database: a signed-in user saves a card', async () => {
    records(await publicDB.saveRecords([{ recordType: 'Card', recordName: 'alice-card', fields: { name: { value: 'Alice' } } }]));
  });
  await step('removing Bob from the zone share', async () => {
    const [share] = records(await privateDB.fetchRecords([{ recordName: 'cloudkit.zoneshare' }], { zoneID }));
    share.participants = (share.participants || []).filter((p) => p.type === 'OWNER');
    records(await privateDB.saveRecords([share], { zoneID }));
  });

  as('bob');
  await step('Bob leaves the hierarchy share (deletes it from his shared database)', async () => {
    const response = await sharedDB.deleteRecords([{ recordName: 'italy-share' }], { zoneID: state.sharedTripsZone });
    check(!response.hasErrors, JSON.stringify(response.errors));
    const zones = await sharedDB.fetchAllRecordZones();
    check(!zones.zones.some((zone) => zone.zoneID.zoneName === 'Trips'), 'Trips is still in his shared database');
  });
  await step('Bob no longer reads the zone', async () => {
    let refused = false;
    try {
      const response = await sharedDB.fetchRecords([{ recordName: 'milk' }], { zoneID: state.sharedListsZone });
      refused = response.hasErrors;
    } catch (error) {
      refused = true;
    }
    check(refused, 'Bob still read the zone');
  });

  as(null);
  await step('the public database without a user: a query', async () => {
    const response = await publicDB.performQuery({ recordType: 'Card' });
    check(response.records.some((record) => record.recordName === 'alice-card'), `found ${response.records.length}`);
  });

  if (keyID && keyFile) {
    const server = CloudKit.getContainer(SERVER_CONTAINER);
    await step('server-to-server: setUpAuth reads the key', async () => {
      await server.setUpAuth();
    });
    await step('server-to-server: a signed save to the public database', async () => {
      records(
        await server.publicCloudDatabase.saveRecords([
          { recordType: 'Card', recordName: 'server-card', fields: { name: { value: 'Server' } } },
        ]),
      );
    });
    await step('server-to-server: a signed query (its own container: the other container\'s cards are not there)', async () => {
      const response = await server.publicCloudDatabase.performQuery({ recordType: 'Card' });
      const names = response.records.map((record) => record.recordName);
      check(names.includes('server-card') && !names.includes('alice-card'), `found ${names.join(', ')}`);
    });
  }

  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed === 0 ? 0 : 1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
