// Choosing the language of a server-rendered page: `?lang=` when it names one we have, else the first
// Accept-Language entry we have (by weight), else the catalogue's first (English).

export function chooseLanguage<M>(catalogue: Record<string, M>, queryLang: unknown, acceptLanguage: string | undefined): M {
  if (typeof queryLang === 'string' && Object.hasOwn(catalogue, queryLang)) return catalogue[queryLang]!;
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().toLowerCase().split(';');
      const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)).find(Boolean);
      return { base: tag.split('-')[0]!, q: q ? Number(q[1]) : 1, i };
    })
    .filter((x) => x.q > 0 && Object.hasOwn(catalogue, x.base))
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return catalogue[ranked[0]?.base ?? Object.keys(catalogue)[0]!]!;
}
