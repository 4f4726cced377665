package feishufake

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
)

// Encrypt seals plain as Feishu seals an event (the body's "encrypt"): base64 of a random IV and
// the AES-256-CBC ciphertext (PKCS#7) under SHA-256 of the encrypt key.
func Encrypt(plain []byte, encryptKey string) string {
	key := sha256.Sum256([]byte(encryptKey))
	block, err := aes.NewCipher(key[:])
	if err != nil {
		panic(err) // a 32-byte key always makes a cipher
	}
	pad := aes.BlockSize - len(plain)%aes.BlockSize
	buf := make([]byte, aes.BlockSize+len(plain)+pad)
	rand.Read(buf[:aes.BlockSize])
	copy(buf[aes.BlockSize:], plain)
	for i := aes.BlockSize + len(plain); i < len(buf); i++ {
		buf[i] = byte(pad)
	}
	cipher.NewCBCEncrypter(block, buf[:aes.BlockSize]).CryptBlocks(buf[aes.BlockSize:], buf[aes.BlockSize:])
	return base64.StdEncoding.EncodeToString(buf)
}

// Sign returns the X-Lark-Signature Feishu sends with a request when an
// encrypt key is set: hex SHA-256 of timestamp + nonce + key + body.
func Sign(timestamp, nonce, encryptKey string, body []byte) string {
	h := sha256.New()
	h.Write([]byte(timestamp + nonce + encryptKey))
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}
