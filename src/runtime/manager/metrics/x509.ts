import { type KeyObject, randomBytes, sign } from 'node:crypto';
import { isIPv4 } from 'node:net';

/**
 * One X.509 v3 certificate (RFC 5280), DER-encoded by hand: Node's crypto parses certificates
 * (`X509Certificate`) but cannot issue one. ECDSA P-256 with SHA-256 only.
 */
export interface CertificateRequest {
  commonName: string;
  /** The subject's public key (an EC P-256 key). */
  publicKey: KeyObject;
  /** The issuer's private key (the subject's own for a self-signed certificate). */
  signingKey: KeyObject;
  /** The issuer's common name; the subject's when absent (self-signed). */
  issuerCommonName?: string;
  notBefore: Date;
  notAfter: Date;
  dnsNames?: string[];
  /** IPv4 addresses. */
  ipAddresses?: string[];
  /** A CA certificate (keyCertSign) instead of a TLS server one (digitalSignature, serverAuth). */
  ca?: boolean;
}

const OID = {
  commonName: '2.5.4.3',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
};

/** A DER tag-length-value; lengths of 128 bytes and more in the long form. */
function tlv(tag: number, content: Uint8Array): Buffer {
  const length: number[] = [];
  for (let n = content.length; n > 0; n = Math.floor(n / 256)) length.unshift(n % 256);
  const header = content.length < 0x80 ? [content.length] : [0x80 | length.length, ...length];
  return Buffer.concat([Buffer.from([tag, ...header]), content]);
}

const sequence = (...items: Buffer[]) => tlv(0x30, Buffer.concat(items));
const explicit = (n: number, content: Buffer) => tlv(0xa0 | n, content);
const octets = (content: Buffer) => tlv(0x04, content);
const bits = (content: Buffer, unused = 0) => tlv(0x03, Buffer.concat([Buffer.from([unused]), content]));

function objectId(dotted: string): Buffer {
  const [first = 0, second = 0, ...rest] = dotted.split('.').map(Number);
  const bytes = [40 * first + second];
  for (const arc of rest) {
    const base128 = [arc & 0x7f];
    for (let v = Math.floor(arc / 128); v > 0; v = Math.floor(v / 128)) base128.unshift(0x80 | (v & 0x7f));
    bytes.push(...base128);
  }
  return tlv(0x06, Buffer.from(bytes));
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 4.1.2.5), to the second. */
function time(date: Date): Buffer {
  const digits = `${date.toISOString().slice(0, 19).replace(/[-:T]/g, '')}Z`;
  const year = date.getUTCFullYear();
  if (year < 1950 || year > 9999) throw new Error(`a certificate time must be 1950-9999, not ${year}`);
  return year < 2050 ? tlv(0x17, Buffer.from(digits.slice(2))) : tlv(0x18, Buffer.from(digits));
}

const name = (commonName: string) =>
  sequence(tlv(0x31, sequence(objectId(OID.commonName), tlv(0x0c, Buffer.from(commonName, 'utf8')))));

const extension = (oid: string, critical: boolean, value: Buffer) =>
  sequence(objectId(oid), ...(critical ? [tlv(0x01, Buffer.from([0xff]))] : []), octets(value));

/** KeyUsage's named bits: a BIT STRING with DER's trailing zero bits left out. */
function keyUsage(usage: number): Buffer {
  let unused = 0;
  while (unused < 7 && !(usage & (1 << unused))) unused++;
  return bits(Buffer.from([usage]), unused);
}
const DIGITAL_SIGNATURE = 0x80;
const KEY_CERT_SIGN = 0x04;
const CRL_SIGN = 0x02;

function subjectAltName(dnsNames: string[], ipAddresses: string[]): Buffer {
  const names = dnsNames.map((dns) => {
    if (!/^[\x21-\x7e]+$/.test(dns)) throw new Error(`not a DNS name: ${JSON.stringify(dns)}`);
    return tlv(0x82, Buffer.from(dns, 'ascii'));
  });
  for (const ip of ipAddresses) {
    if (!isIPv4(ip)) throw new Error(`not an IPv4 address: ${JSON.stringify(ip)}`);
    names.push(tlv(0x87, Buffer.from(ip.split('.').map(Number))));
  }
  return sequence(...names);
}

/** The certificate, PEM, with a random positive 128-bit serial number. */
export function issueCertificate(request: CertificateRequest): string {
  const { publicKey, signingKey, ca = false, dnsNames = [], ipAddresses = [] } = request;
  for (const key of [publicKey, signingKey]) {
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
      throw new Error('issueCertificate signs with EC P-256 keys only');
  }
  const serial = randomBytes(16);
  // An INTEGER in DER's shortest form that is positive: the first byte neither 0 nor above 0x7f.
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40;
  const algorithm = sequence(objectId(OID.ecdsaWithSha256));
  const extensions = [
    extension(OID.basicConstraints, true, ca ? sequence(tlv(0x01, Buffer.from([0xff]))) : sequence()),
    extension(OID.keyUsage, true, keyUsage(ca ? KEY_CERT_SIGN | CRL_SIGN : DIGITAL_SIGNATURE)),
    ...(ca ? [] : [extension(OID.extKeyUsage, false, sequence(objectId(OID.serverAuth)))]),
    ...(dnsNames.length + ipAddresses.length > 0
      ? [extension(OID.subjectAltName, false, subjectAltName(dnsNames, ipAddresses))]
      : []),
  ];
  const tbs = sequence(
    explicit(0, tlv(0x02, Buffer.from([2]))), // v3
    tlv(0x02, serial),
    algorithm,
    name(request.issuerCommonName ?? request.commonName),
    sequence(time(request.notBefore), time(request.notAfter)),
    name(request.commonName),
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, sequence(...extensions)),
  );
  // Node's ECDSA signature is DER's Ecdsa-Sig-Value, what X.509 carries.
  const der = sequence(tbs, algorithm, bits(sign('sha256', tbs, signingKey)));
  const base64 = der.toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN CERTIFICATE-----\n${base64.replace(/\n$/, '')}\n-----END CERTIFICATE-----\n`;
}
