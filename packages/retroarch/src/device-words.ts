/** Input words per device type (RETRO_DEVICE_* & 0xff), as RetroArch 1.14 counts them. */
export function retroArchDeviceWords(deviceType: number): number {
  switch (deviceType & 0xff) {
    case 1: // joypad
      return 1;
    case 2: // mouse
    case 4: // lightgun
      return 2;
    case 3: // keyboard
      return 5;
    case 5: // analog
      return 3;
    default:
      return 0;
  }
}

/** Number of input words for the devices in `mask`, given SYNC's device types. */
export function retroArchInputWords(devices: readonly number[], mask: number): number {
  let words = 0;
  for (let d = 0; d < devices.length && d < 16; d++) if (mask & (1 << d)) words += retroArchDeviceWords(devices[d]!);
  return words;
}
