// The greetings that the resources and the prompt of plugin.js serve: plain
// JavaScript that greetings.test.js tests with the machine's Node.

export const GREETINGS = {
  english: 'Hello',
  french: 'Bonjour',
  german: 'Hallo',
  spanish: 'Hola',
};

/** Hello in `language`, or undefined when this plugin does not know it. */
export function helloIn(language) {
  return Object.hasOwn(GREETINGS, language) ? GREETINGS[language] : undefined;
}

/** Every greeting, one per line. */
export function markdown() {
  return Object.entries(GREETINGS)
    .map(([language, hello]) => `- ${language}: ${hello}\n`)
    .join('');
}

/** The languages that start with what the user has typed so far. */
export function completeLanguage(typed) {
  return Object.keys(GREETINGS).filter((language) => language.startsWith(typed.toLowerCase()));
}
