// Password hashing (src/security/passwords.ts): scrypt in the PHC string format, salted, verified in constant
// time, its parameters read from the stored string and bounded, and hashes of older parameters marked for rehash.
import { expect } from 'chai';
import {
  dummyPasswordHash,
  hashPassword,
  needsRehash,
  parseStoredHash,
  SCRYPT_PARAMETERS,
  verifyPassword,
} from '../../../src/security/passwords';

describe('passwords', function () {
  this.timeout(30_000);

  it('store scrypt with its parameters, a 16-byte salt and a 32-byte hash; the same password twice differs', async () => {
    const a = await hashPassword('correct horse battery staple');
    const b = await hashPassword('correct horse battery staple');
    expect(a).to.match(/^\$scrypt\$ln=15,r=8,p=3\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{43}$/);
    expect(a).not.to.equal(b);
    expect(parseStoredHash(a)?.params).to.deep.equal(SCRYPT_PARAMETERS);
  });

  it('verify the password it was made from and no other', async () => {
    const stored = await hashPassword('correct horse battery staple');
    expect(await verifyPassword('correct horse battery staple', stored)).to.equal(true);
    expect(await verifyPassword('correct horse battery stapl', stored)).to.equal(false);
    expect(await verifyPassword('Correct horse battery staple', stored)).to.equal(false);
    expect(await verifyPassword('', stored)).to.equal(false);
  });

  it('compare Unicode passwords in one normal form (NFC): the composed and decomposed é are one password', async () => {
    const stored = await hashPassword('mot de passe d\u00e9j\u00e0 vu');
    expect(await verifyPassword('mot de passe de\u0301ja\u0300 vu', stored)).to.equal(true);
  });

  it('match nothing against a malformed stored hash, or one naming parameters out of bounds', async () => {
    const stored = await hashPassword('pw pw pw pw pw');
    const [, , , salt, hash] = stored.split('$');
    for (const bad of [
      'plain text',
      `$scrypt$ln=25,r=8,p=1$${salt}$${hash}`, // 2^25: a gigabyte-sized verification
      `$scrypt$ln=15,r=64,p=1$${salt}$${hash}`,
      `$scrypt$ln=15,r=8,p=3$${salt}$${hash.slice(0, 20)}`,
      `$argon2id$v=19$m=65536,t=3,p=4$${salt}$${hash}`,
    ]) {
      expect(parseStoredHash(bad), bad).to.equal(undefined);
      expect(await verifyPassword('pw pw pw pw pw', bad), bad).to.equal(false);
    }
  });

  it('verify hashes of older parameters, and mark them for a rehash', async () => {
    const older = await hashPassword('an older password', { ln: 14, r: 8, p: 1 });
    expect(older.startsWith('$scrypt$ln=14,r=8,p=1$')).to.equal(true);
    expect(await verifyPassword('an older password', older)).to.equal(true);
    expect(needsRehash(older)).to.equal(true);
    expect(needsRehash(await hashPassword('a current one'))).to.equal(false);
  });

  it('make one dummy hash per process, with today’s parameters, that matches no guess', async () => {
    const dummy = await dummyPasswordHash();
    expect(await dummyPasswordHash()).to.equal(dummy);
    expect(needsRehash(dummy)).to.equal(false);
    expect(await verifyPassword('', dummy)).to.equal(false);
  });
});
