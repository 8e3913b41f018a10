// A TCP socket connected to a RetroArch host.
declare const socket: import('node:net').Socket;
