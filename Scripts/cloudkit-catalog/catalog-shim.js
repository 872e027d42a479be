// Loaded first by the Catalog's page (catalog-driver.mjs adds it to index.html as served; the Catalog's own
// files are not changed). It registers its `cloudkitloaded` listener before the page's, so that when the
// page's init.js calls CloudKit.configure, the configuration gains what every app pointed elsewhere needs:
// `services.fetch`, which sends Apple's host to the emulator, and the emulator's API token in place of the
// sample's placeholder. Everything else (container, environment, persist, sign-in buttons) is the Catalog's.
(function () {
  var params = new URLSearchParams(location.search);
  var server = params.get('server');
  var apiToken = params.get('token');
  var APPLE = 'https://api.apple-cloudkit.com';
  // Each request CloudKit JS sends, as `METHOD path -> status`, for the driver's report of a failed step.
  window.catalogCheckRequests = [];

  function emulatorFetch(url, options) {
    var text = String(url);
    var target = text.startsWith(APPLE) ? server + text.slice(APPLE.length) : text;
    if (!target.startsWith(server)) {
      // CloudKit JS's usage reports: answered here, sent nowhere.
      return Promise.resolve(new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } }));
    }
    var method = (options && options.method) || 'GET';
    var path = target.slice(server.length).split('?')[0];
    return window.fetch(target, options).then(function (response) {
      var sent = response.status >= 400 && options && typeof options.body === 'string' ? ' ' + options.body.slice(0, 400) : '';
      window.catalogCheckRequests.push(method + ' ' + path + ' -> ' + response.status + sent);
      return response;
    });
  }

  window.addEventListener('cloudkitloaded', function () {
    var configure = CloudKit.configure;
    CloudKit.configure = function (config) {
      config.services = Object.assign({}, config.services, { fetch: emulatorFetch });
      (config.containers || []).forEach(function (container) {
        if (container.apiTokenAuth) container.apiTokenAuth.apiToken = apiToken;
      });
      window.catalogCheckConfigured = true;
      return configure.call(CloudKit, config);
    };
  });

  // The driver calls the Catalog's samples by tab and title, as its Run button does, with the arguments its
  // forms would give, and gets the text the sample rendered or the error it failed with.
  window.catalogCheckRun = function (tabName, title, args) {
    var samples = CKCatalog.tabs[tabName] || [];
    var sample = samples.filter(function (s) { return s.title === title; })[0];
    if (!sample) return Promise.resolve({ ok: false, text: 'the Catalog has no sample ' + tabName + '/' + title });
    var before = window.catalogCheckRequests.length;
    var requests = function () { return window.catalogCheckRequests.slice(before); };
    try {
      return Promise.resolve(sample.sampleCode.apply(sample, args || [])).then(function (content) {
        var text = content && content.textContent ? content.textContent.replace(/\s+/g, ' ').trim() : '';
        return { ok: true, text: text, requests: requests() };
      }, function (error) {
        return { ok: false, text: describe(error), requests: requests() };
      });
    } catch (error) {
      return Promise.resolve({ ok: false, text: describe(error), requests: requests() });
    }
  };

  function describe(error) {
    if (!error) return String(error);
    var reason = error.reason || error.message || JSON.stringify(error);
    var code = error.serverErrorCode || error.ckErrorCode;
    return code ? reason + ' [' + code + ']' : reason;
  }
})();
