import {
  errorText,
  isTimeout
} from "./chunk-XDXMVCQC.js";
export {
  errorText,
  isTimeout
};
