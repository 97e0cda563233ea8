// The greetings that the resources and the prompt of plugin.ts serve: plain
// TypeScript that greetings.test.ts tests on Node.

export const GREETINGS: Readonly<Record<string, string>> = {
  english: 'Hello',
  french: 'Bonjour',
  german: 'Hallo',
  spanish: 'Hola',
};

/** Hello in `language`, or undefined when this plugin does not know it. */
export function helloIn(language: string): string | undefined {
  return Object.hasOwn(GREETINGS, language) ? GREETINGS[language] : undefined;
}

/** Every greeting, one per line. */
export function markdown(): string {
  return Object.entries(GREETINGS)
    .map(([language, hello]) => `- ${language}: ${hello}\n`)
    .join('');
}

/** The languages that start with what the user has typed so far. */
export function completeLanguage(typed: string): string[] {
  return Object.keys(GREETINGS).filter((language) => language.startsWith(typed.toLowerCase()));
}
