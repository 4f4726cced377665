package feishu

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
)

// signature returns X-Lark-Signature of a request: the hex SHA-256 of
// timestamp + nonce + encrypt key + body.
func signature(timestamp, nonce, encryptKey string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(timestamp))
	h.Write([]byte(nonce))
	h.Write([]byte(encryptKey))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// verifySignature checks a request's X-Lark-Signature.
func verifySignature(timestamp, nonce, sig, encryptKey string, body []byte) error {
	if timestamp == "" || nonce == "" || sig == "" {
		return errors.New("the X-Lark-Request-Timestamp, X-Lark-Request-Nonce or X-Lark-Signature header is missing")
	}
	want := signature(timestamp, nonce, encryptKey, body)
	if subtle.ConstantTimeCompare([]byte(want), []byte(strings.ToLower(sig))) != 1 {
		return errors.New("X-Lark-Signature does not match: check the Encrypt Key")
	}
	return nil
}

// decrypt opens an encrypted event: base64 of a 16-byte IV and the
// AES-256-CBC ciphertext (PKCS#7 padded) under SHA-256 of the encrypt key.
func decrypt(encrypted, encryptKey string) ([]byte, error) {
	raw, err := base64.StdEncoding.DecodeString(encrypted)
	if err != nil {
		return nil, errors.New("encrypt is not base64")
	}
	if len(raw) < 2*aes.BlockSize || len(raw)%aes.BlockSize != 0 {
		return nil, errors.New("encrypt is not an IV and whole AES blocks")
	}
	key := sha256.Sum256([]byte(encryptKey))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(raw)-aes.BlockSize)
	cipher.NewCBCDecrypter(block, raw[:aes.BlockSize]).CryptBlocks(out, raw[aes.BlockSize:])
	pad := int(out[len(out)-1])
	if pad == 0 || pad > aes.BlockSize || pad > len(out) {
		return nil, errors.New("encrypt does not decrypt with this key (bad padding)")
	}
	for _, b := range out[len(out)-pad:] {
		if int(b) != pad {
			return nil, errors.New("encrypt does not decrypt with this key (bad padding)")
		}
	}
	return out[:len(out)-pad], nil
}
