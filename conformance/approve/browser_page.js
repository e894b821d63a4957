// What the browser approver runs in the page (browser_drive.go): inspect
// reads the page and keeps the elements it chose on window.__mcpauth;
// signIn, press and follow act on them. Every act marks the document, so
// the approver waits for the next one instead of acting twice.
({
  inspect(mode) {
    const approve = /\b(approve|allow|accept|authori[sz]e|consent|continue|yes|grant)\b/i;
    const deny = /\b(deny|cancel|reject|decline|no)\b/i;
    const word = mode === 'deny' ? deny : approve;
    const userNames = /^(username|user|login|email|identifier|user_?name)$/i;
    const visible = (el) => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
    const textual = (el) => el.type === 'text' || el.type === 'email';
    const inputs = [...document.querySelectorAll('input')].filter(visible);
    const state = {};
    const out = {
      url: location.href, ready: document.readyState, acted: !!window.__mcpauthActed,
      text: (document.body ? document.body.innerText : '').replace(/\s+/g, ' ').trim().slice(0, 300),
    };

    // Sign-in: a visible password input and the text or email input
    // before it in its form; else a visible input named like a user name.
    const password = inputs.find((i) => i.type === 'password');
    let user = null;
    if (password) {
      const before = inputs.filter((i) => textual(i) && i.form === password.form &&
        (i.compareDocumentPosition(password) & Node.DOCUMENT_POSITION_FOLLOWING));
      user = before[before.length - 1] || null;
    } else {
      user = inputs.find((i) => textual(i) && (userNames.test(i.name) || userNames.test(i.id))) || null;
    }
    if (password || user) {
      const form = (password || user).form;
      const submit = form && [...form.querySelectorAll('button, input[type=submit], input[type=image]')]
        .find((b) => (b.type === 'submit' || b.type === 'image') && visible(b));
      state.signIn = { form, user, password, submit };
      out.signIn = {
        inForm: !!form, password: !!password, user: !!user,
        // Attributes, not properties: an input named "action" hides the
        // form's action property (as the development provider's does).
        action: form ? new URL((submit && submit.getAttribute('formaction')) ||
          HTMLFormElement.prototype.getAttribute.call(form, 'action') || location.href, document.baseURI).href : '',
      };
    }

    // Consent: the first visible button whose label, value or name says
    // the wanted action; else a link whose whole text says it.
    const buttons = [...document.querySelectorAll('button, input[type=submit], input[type=button]')].filter(visible);
    state.press = buttons.find((b) => {
      const label = (b.tagName === 'INPUT' ? b.value : b.innerText) || '';
      return word.test(label) || word.test(b.value || '') || (!b.value && word.test(b.name || ''));
    });
    if (state.press) {
      out.press = ((state.press.tagName === 'INPUT' ? state.press.value : state.press.innerText) || state.press.name).trim().slice(0, 60);
    }
    state.follow = [...document.querySelectorAll('a[href]')].filter(visible).find((a) => {
      const label = a.innerText.replace(/^[^\p{L}]+|[^\p{L}]+$/gu, '');
      const m = label.match(word);
      return m && m[0].length === label.length;
    });
    if (state.follow) {
      out.follow = state.follow.href;
    }
    window.__mcpauth = state;
    return out;
  },

  signIn(user, password) {
    const s = window.__mcpauth.signIn;
    // The native setter and the events a person's typing fires, so that
    // pages whose scripts keep the form's state see the values too.
    const set = (el, v) => {
      Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set.call(el, v);
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    };
    if (s.user) {
      set(s.user, user);
    }
    if (s.password) {
      set(s.password, password);
    }
    window.__mcpauthActed = true;
    if (s.submit) {
      HTMLFormElement.prototype.requestSubmit.call(s.form, s.submit);
    } else {
      HTMLFormElement.prototype.requestSubmit.call(s.form);
    }
  },

  press() {
    window.__mcpauthActed = true;
    window.__mcpauth.press.click();
  },

  follow() {
    window.__mcpauthActed = true;
    window.__mcpauth.follow.click();
  },
})
