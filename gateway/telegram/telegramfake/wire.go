package telegramfake

import "encoding/json"

// The Bot API's objects as Telegram serialises them
// (https://core.telegram.org/bots/api#available-types), only the fields
// the fake produces. They are written here rather than taken from the
// client library so the fake checks the library, not itself.

type tgUser struct {
	ID        int64  `json:"id"`
	IsBot     bool   `json:"is_bot"`
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

type tgChat struct {
	ID        int64  `json:"id"`
	Type      string `json:"type"`
	Title     string `json:"title,omitempty"`
	FirstName string `json:"first_name,omitempty"`
	Username  string `json:"username,omitempty"`
}

type tgPhotoSize struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	Width        int    `json:"width"`
	Height       int    `json:"height"`
	FileSize     int    `json:"file_size,omitempty"`
}

type tgDocument struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileName     string `json:"file_name,omitempty"`
	MimeType     string `json:"mime_type,omitempty"`
	FileSize     int    `json:"file_size,omitempty"`
}

type tgFile struct {
	FileID       string `json:"file_id"`
	FileUniqueID string `json:"file_unique_id"`
	FileSize     int    `json:"file_size,omitempty"`
	FilePath     string `json:"file_path,omitempty"`
}

type tgButton struct {
	Text         string           `json:"text"`
	CallbackData *string          `json:"callback_data,omitempty"`
	URL          string           `json:"url,omitempty"`
	CopyText     *json.RawMessage `json:"copy_text,omitempty"`
}

type tgMarkup struct {
	InlineKeyboard [][]tgButton `json:"inline_keyboard"`
}

type tgMessage struct {
	MessageID   int           `json:"message_id"`
	From        *tgUser       `json:"from,omitempty"`
	Chat        tgChat        `json:"chat"`
	Date        int64         `json:"date"`
	EditDate    int64         `json:"edit_date,omitempty"`
	Text        string        `json:"text,omitempty"`
	Caption     string        `json:"caption,omitempty"`
	Photo       []tgPhotoSize `json:"photo,omitempty"`
	Document    *tgDocument   `json:"document,omitempty"`
	ReplyMarkup *tgMarkup     `json:"reply_markup,omitempty"`
}

type tgCallbackQuery struct {
	ID           string     `json:"id"`
	From         tgUser     `json:"from"`
	Message      *tgMessage `json:"message,omitempty"`
	ChatInstance string     `json:"chat_instance"`
	Data         string     `json:"data,omitempty"`
}

type tgUpdate struct {
	UpdateID      int64            `json:"update_id"`
	Message       *tgMessage       `json:"message,omitempty"`
	CallbackQuery *tgCallbackQuery `json:"callback_query,omitempty"`
}

// tgResponse is the envelope of every Bot API answer.
type tgResponse struct {
	OK          bool          `json:"ok"`
	Result      any           `json:"result,omitempty"`
	ErrorCode   int           `json:"error_code,omitempty"`
	Description string        `json:"description,omitempty"`
	Parameters  *tgParameters `json:"parameters,omitempty"`
}

type tgParameters struct {
	RetryAfter int `json:"retry_after,omitempty"`
}
