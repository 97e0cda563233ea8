// The checklists behind plugin `js-checklists`, kept apart from the plugin
// contract so that they can be tested with plain Node
// (node --test checklists.test.js).

export const CHECKLISTS = {
  release: ['Tests pass on main', 'Changelog updated', 'Version bumped', 'Tag pushed'],
  review: ['The change does one thing', 'Tests cover it', 'Names say what they hold', 'Errors are clear'],
  incident: ['Stop the bleeding', 'Tell the people affected', 'Find the cause', 'Write it down'],
};

export const uriOf = (name) => `checklist://${name}`;

/** The checklist of a URI `checklist://NAME` as markdown, or undefined. */
export function read(uri) {
  const prefix = 'checklist://';
  if (!uri.startsWith(prefix)) return undefined;
  return markdown(uri.slice(prefix.length));
}

/** Checklist `name` as markdown, or undefined if there is none. */
export function markdown(name) {
  if (!Object.hasOwn(CHECKLISTS, name)) return undefined;
  return `# ${name}\n\n${CHECKLISTS[name].map((item) => `- [ ] ${item}`).join('\n')}\n`;
}

/** The checklist names that start with what was typed, ignoring case. */
export function complete(typed) {
  const prefix = typed.toLowerCase();
  return Object.keys(CHECKLISTS).filter((name) => name.startsWith(prefix));
}
