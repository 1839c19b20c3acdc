// The widget's stylesheet, inside its shadow root: the host page's CSS does not reach in (its inherited values are
// cut at the host by `all: initial`, whose !important wins over the page's !important), and none of this leaks out.
// Sizes in px, never rem (rem follows the host page's root font size).

/** Only a hex colour is taken from the bot's settings into CSS. */
export const safeColour = (c: string | undefined): string => (c && /^#[0-9a-f]{3,8}$/i.test(c) ? c : '#2563eb');

export const widgetCss = (primary: string): string => `
:host { all: initial !important; position: fixed !important; z-index: 2147483000 !important; inset: auto 20px 20px auto !important; display: block !important; }
* { box-sizing: border-box; font-family: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif; font-size: 14px; line-height: 1.4; color: #1f2328; }
[hidden] { display: none !important; }
.launcher { all: unset; cursor: pointer; width: 56px; height: 56px; border-radius: 50%; background: ${primary}; color: #fff; display: flex; align-items: center; justify-content: center; box-shadow: 0 6px 20px rgb(0 0 0 / 0.25); position: relative; margin-left: auto; }
.launcher:focus-visible, button:focus-visible, textarea:focus-visible, select:focus-visible { outline: 3px solid ${primary}; outline-offset: 2px; }
.launcher svg { width: 26px; height: 26px; fill: #fff; }
.badge { position: absolute; top: -4px; right: -4px; min-width: 20px; height: 20px; border-radius: 10px; background: #ef4444; color: #fff; font-size: 12px; font-weight: 700; display: flex; align-items: center; justify-content: center; padding: 0 5px; }
.panel { width: 360px; max-width: calc(100vw - 40px); height: 520px; max-height: calc(100vh - 110px); background: #fff; border-radius: 14px; box-shadow: 0 10px 40px rgb(0 0 0 / 0.25); display: flex; flex-direction: column; overflow: hidden; margin-bottom: 12px; }
.bar { background: ${primary}; display: flex; align-items: center; gap: 8px; padding: 10px 12px; }
.bar * { color: #fff; }
.title { flex: 1; font-weight: 600; font-size: 15px; margin: 0; }
.status { font-size: 11px; opacity: 0.85; }
.bar button, .bar select { all: unset; cursor: pointer; background: rgb(255 255 255 / 0.18); border-radius: 8px; padding: 4px 8px; font-size: 13px; }
.bar select option { color: #1f2328; }
.messages { list-style: none; margin: 0; padding: 12px; flex: 1; overflow-y: auto; background: #f5f6f8; display: flex; flex-direction: column; gap: 8px; }
.message { max-width: 80%; padding: 8px 11px; border-radius: 14px; background: #fff; align-self: flex-start; box-shadow: 0 1px 2px rgb(0 0 0 / 0.06); overflow-wrap: anywhere; }
.message.incoming { align-self: flex-end; background: ${primary}; }
.message.incoming * { color: #fff; }
.message .text { white-space: pre-wrap; margin: 0; }
.message .meta { display: block; font-size: 11px; opacity: 0.75; margin-top: 3px; text-align: right; }
.message img { display: block; max-width: 220px; max-height: 220px; border-radius: 10px; margin-top: 4px; }
.typing, .error { margin: 0; padding: 4px 12px; font-size: 12px; }
.typing { color: #6b7280; font-style: italic; background: #f5f6f8; }
.error { color: #991b1b; background: #fef2f2; }
.composer { display: flex; gap: 6px; padding: 8px; border-top: 1px solid #e5e7eb; align-items: flex-end; }
.composer textarea { flex: 1; resize: none; border: 1px solid #d1d5db; border-radius: 10px; padding: 8px 10px; background: #fff; }
.composer button { all: unset; cursor: pointer; background: ${primary}; border-radius: 10px; padding: 8px 14px; color: #fff; font-weight: 600; }
.composer button:disabled { opacity: 0.6; cursor: default; }
.attach { cursor: pointer; padding: 8px 4px; display: flex; color: #6b7280; }
.attach input { position: absolute; width: 1px; height: 1px; opacity: 0; }
.attach:focus-within { outline: 3px solid ${primary}; border-radius: 8px; }
.interactive { display: flex; flex-wrap: wrap; gap: 6px; margin-top: 8px; }
.interactive.form, .interactive.input_csat { flex-direction: column; align-items: stretch; }
.interactive.cards { align-items: flex-start; }
.interactive fieldset { border: 0; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 6px; min-width: 0; }
.interactive button { all: unset; cursor: pointer; border: 1px solid ${primary}; color: ${primary}; background: #fff; border-radius: 999px; padding: 4px 11px; }
.interactive button:focus-visible, .interactive a:focus-visible, .interactive input:focus-visible { outline: 3px solid ${primary}; outline-offset: 2px; }
.interactive button:disabled { cursor: default; opacity: 0.55; }
.interactive button[aria-pressed='true'] { background: ${primary}; color: #fff; opacity: 1; font-weight: 600; }
.interactive .submit { align-self: flex-start; background: ${primary}; color: #fff; }
.card { border: 1px solid #e5e7eb; border-radius: 10px; padding: 8px; display: flex; flex-direction: column; gap: 4px; }
.card p { margin: 0; }
.card-title { font-weight: 600; }
.card .actions { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; }
.card a.action { color: ${primary}; }
.field { display: flex; flex-direction: column; gap: 2px; }
.field label, .input_csat label { font-size: 12px; color: #6b7280; }
.field input, .field textarea, .field select, .input_csat textarea { border: 1px solid #d1d5db; border-radius: 8px; padding: 5px 7px; background: #fff; }
.interactive .star { border: 0; background: none; color: #9ca3af; font-size: 22px; padding: 0 2px; }
.interactive .star.lit, .interactive .star[aria-pressed='true'] { color: #d97706; background: none; opacity: 1; }
.refusal { margin: 0; padding: 5px 7px; border-radius: 8px; background: #fef2f2; color: #991b1b; font-size: 12px; }
.summary { margin: 0; font-size: 12px; color: #6b7280; }
.sr { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

/** A constructed stylesheet where the browser has them (no <style> element: a host CSP without 'unsafe-inline' allows it). */
export function adoptStyles(root: ShadowRoot, css: string): void {
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [sheet];
    return;
  }
  const style = document.createElement('style');
  style.textContent = css;
  root.append(style);
}
