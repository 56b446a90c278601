// Phone numbers: normalised to E.164 on the way in, masked on the way out (contract §4).

/** `+919876543210` stays; `9876543210` becomes `<defaultCountryCode>9876543210`. Input already matched the schema. */
export function normalisePhone(input: string, defaultCountryCode: string): string {
  return input.startsWith('+') ? input : defaultCountryCode + input;
}

/** `+`, one `*` per hidden digit, then the last 4 digits (the last 3 below 10 digits). */
export function maskPhone(e164: string): string {
  const digits = e164.replace(/\D/g, '');
  const visible = digits.length < 10 ? 3 : 4;
  return '+' + '*'.repeat(Math.max(0, digits.length - visible)) + digits.slice(-visible);
}
