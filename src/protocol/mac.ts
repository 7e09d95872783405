// Resolution MAC: HMAC-SHA256 under the operation's key over a canonical,
// unambiguous byte encoding of what the adapter acts on. Not the protobuf
// bytes: those are not canonical (field order, varint width), and the C side
// must be able to rebuild the input from the decoded fields alone.
//
// macInput layout (all integers big-endian, no padding):
//
//   offset  size  field
//   0       25    tag: ASCII "gensee-resolution-mac-v1" followed by one 0x00
//   25      4+n   fault_id      u32 byte length n, then n bytes UTF-8
//           1     action        u8, the proto Action number
//                               (1 continue_already_authorized, 2 retry_after_lease,
//                                3 delegate, 4 deny)
//           4+n   reason        u32 length, UTF-8
//           1     has_lease     u8: 0 = no lease (nothing follows for the lease),
//                                   1 = lease follows:
//             8     generation          u64
//             1     family              u8, proto Family   (1 ipv4, 2 ipv6)
//             1     protocol            u8, proto Protocol (1 tcp, 2 udp)
//             4+n   address             u32 length, ASCII text exactly as in Lease.address
//             2     port                u16
//             8     expires_at_boot_ns  u64
//             4     max_uses            u32
//           4+n   delegate_to   u32 length, UTF-8 (length 0 when absent)
//
// Every variable-length field is length-prefixed and every optional part is
// flagged, so two different resolutions never share an input.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { ACTION, FAMILY, PROTOCOL, toNumber } from './enums';
import type { Resolution } from './types';

export const MAC_TAG = Buffer.from('gensee-resolution-mac-v1\0', 'latin1');

/** The canonical bytes the MAC covers (layout above), built in one buffer. */
export function macInput(r: Resolution): Buffer {
  const l = r.lease;
  const reason = r.reason;
  const dto = r.delegate_to ?? '';
  const strLen = (x: string) => 4 + Buffer.byteLength(x, 'utf8');
  const size =
    MAC_TAG.length + strLen(r.fault_id) + 1 + strLen(reason) + 1 + (l ? 8 + 1 + 1 + strLen(l.address) + 2 + 8 + 4 : 0) + strLen(dto);
  const b = Buffer.allocUnsafe(size);
  let o = MAC_TAG.copy(b, 0);
  const str = (x: string) => {
    const n = b.write(x, o + 4, 'utf8');
    b.writeUInt32BE(n, o);
    o += 4 + n;
  };
  str(r.fault_id);
  o = b.writeUInt8(toNumber(ACTION, r.action), o);
  str(reason);
  if (l) {
    o = b.writeUInt8(1, o);
    o = b.writeBigUInt64BE(BigInt(l.generation), o);
    o = b.writeUInt8(toNumber(FAMILY, l.family), o);
    o = b.writeUInt8(toNumber(PROTOCOL, l.protocol), o);
    str(l.address);
    o = b.writeUInt16BE(l.port, o);
    o = b.writeBigUInt64BE(l.expires_at_boot_ns, o);
    o = b.writeUInt32BE(l.max_uses, o);
  } else {
    o = b.writeUInt8(0, o);
  }
  str(dto);
  return b;
}

/** HMAC-SHA256(key, macInput(r)): 32 bytes. */
export function computeMac(key: Uint8Array, r: Resolution): Buffer {
  return createHmac('sha256', key).update(macInput(r)).digest();
}

/** Constant-time check of a resolution's MAC; false for any length mismatch. */
export function verifyMac(key: Uint8Array, r: Resolution, mac: Uint8Array): boolean {
  const want = computeMac(key, r);
  return mac.length === want.length && timingSafeEqual(want, mac);
}
