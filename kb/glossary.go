package kb

import (
	"strings"
	"unicode/utf8"
)

// glossary gives the English words code is written in for common
// programming terms in Chinese (simplified and, where they differ,
// traditional), so that a question asked in Chinese over English code
// (comments, identifiers) finds something by keyword: its Chinese words
// match nothing there. It is a general vocabulary of programming, not a
// translation of any question set; a term it lacks is left to the
// vector pass. Every term is two characters or more: a single character
// is too often part of another word ("行" is a line, but also the end of
// "进行", to carry out).
var glossary = map[string]string{
	// Data and types.
	"字符串": "string", "字符": "character char rune", "字节": "byte bytes", "整数": "integer int",
	"整型": "int", "浮点数": "float", "浮点": "float", "布尔": "bool boolean", "数字": "number",
	"数组": "array", "切片": "slice", "列表": "list", "链表": "list linked", "映射": "map",
	"字典": "map dictionary", "哈希表": "hash map table", "集合": "set", "队列": "queue",
	"堆栈": "stack", "调用栈": "stack call", "二叉树": "tree binary", "键值": "key value",
	"结构体": "struct", "结构": "struct structure", "接口": "interface", "类型": "type", "泛型": "generic generics",
	"指针": "pointer", "引用": "reference", "变量": "variable", "常量": "constant const",
	"函数": "function func", "方法": "method", "参数": "parameter argument", "返回值": "return value",
	"闭包": "closure", "对象": "object", "字段": "field", "属性": "attribute property",
	"元素": "element", "长度": "length len", "容量": "capacity cap",
	"索引": "index", "迭代器": "iterator", "迭代": "iterate", "遍历": "walk iterate range visit",
	"枚举": "enum", "零值": "zero value", "大小写": "case upper lower",
	"大写": "upper", "小写": "lower", "空白": "whitespace space",
	// Operations.
	"排序": "sort", "查找": "find search lookup", "搜索": "search", "比较": "compare",
	"复制": "copy", "拷贝": "copy", "拼接": "concat join", "连接": "connection connect join",
	"分割": "split", "拆分": "split", "合并": "merge", "替换": "replace", "删除": "delete remove",
	"插入": "insert", "添加": "add append", "追加": "append", "反转": "reverse", "过滤": "filter",
	"转换": "convert conversion", "解析": "parse", "格式化": "format", "打印": "print",
	"输出": "output write print", "输入": "input read", "读取": "read", "写入": "write",
	"创建": "create new", "初始化": "init initialize", "关闭": "close",
	"打开": "open", "启动": "start", "停止": "stop", "取消": "cancel", "等待": "wait",
	"调用": "call", "执行": "exec execute run", "运行": "run", "计算": "compute calculate",
	"生成": "generate", "校验": "check verify", "验证": "verify validate", "检查": "check",
	"匹配": "match", "转义": "escape", "编码": "encode encoding", "解码": "decode",
	"序列化": "marshal serialize encode", "反序列化": "unmarshal deserialize decode",
	"压缩": "compress", "解压": "decompress", "加密": "encrypt", "解密": "decrypt",
	"签名": "sign signature", "哈希": "hash", "散列": "hash", "摘要": "digest hash sum",
	"随机": "random rand", "随机数": "random rand", "分配": "allocate alloc", "释放": "free release",
	"重试": "retry", "超时": "timeout", "截止时间": "deadline", "延迟": "delay latency",
	"重定向": "redirect", "缓存": "cache", "缓冲": "buffer", "缓冲区": "buffer",
	"刷新": "flush", "同步": "sync synchronize", "异步": "async asynchronous",
	"溢出": "overflow", "舍入": "round rounding", "乘法": "multiply multiplication mul",
	"除法": "divide division div", "加法": "add addition", "减法": "subtract sub",
	// Text and formats.
	"正则表达式": "regexp regular expression", "正则": "regexp regular expression",
	"模板": "template", "单词": "word", "文本": "text", "编码格式": "encoding",
	"注释": "comment", "语法树": "syntax tree ast", "语法": "syntax", "源代码": "source code",
	"代码": "code", "时间戳": "timestamp", "日期": "date", "时区": "timezone location zone",
	"时间": "time", "持续时间": "duration", "定时器": "timer", "计时器": "timer ticker",
	// Files and the system.
	"文件": "file", "目录": "directory dir", "文件夹": "directory folder", "路径": "path",
	"权限": "permission mode", "符号链接": "symlink link", "进程": "process", "线程": "thread",
	"信号": "signal", "命令": "command cmd", "命令行": "command line flag args", "标志": "flag",
	"环境变量": "environment env variable", "内存": "memory", "磁盘": "disk", "系统调用": "syscall",
	"标准输出": "stdout output", "标准输入": "stdin input", "标准错误": "stderr",
	"管道": "pipe", "日志": "log logger", "配置": "config configuration",
	// Concurrency and the runtime.
	"并发": "concurrent concurrency", "并行": "parallel", "协程": "goroutine", "通道": "channel chan",
	"互斥锁": "mutex lock", "读写锁": "rwmutex read write lock",
	"原子": "atomic", "加锁": "lock", "解锁": "unlock", "竞态": "race", "死锁": "deadlock", "调度器": "scheduler schedule",
	"调度": "schedule scheduler", "垃圾回收": "garbage collector gc", "垃圾收集": "garbage collector gc",
	"上下文": "context", "等待组": "waitgroup wait group", "一次": "once",
	// Networking and the web.
	"网络": "network net", "请求": "request", "响应": "response", "客户端": "client",
	"服务器": "server", "服务端": "server", "端口": "port", "套接字": "socket", "地址": "address addr",
	"域名": "domain dns", "代理": "proxy", "头部": "header", "请求头": "request header",
	"表单": "form", "查询": "query", "证书": "certificate cert", "密钥": "key",
	"私钥": "private key", "公钥": "public key", "密码": "password cipher", "会话": "session",
	"路由": "route router", "中间件": "middleware", "数据库": "database sql db",
	"事务": "transaction tx", "连接池": "pool connection",
	// Errors and tests.
	"错误": "error err", "异常": "exception panic error", "恐慌": "panic", "恢复": "recover",
	"测试": "test testing", "基准测试": "benchmark", "模糊测试": "fuzz fuzzing",
	"示例": "example", "调试": "debug", "断言": "assert assertion",
	// Traditional forms that differ.
	"字串": "string", "陣列": "array", "結構體": "struct", "檔案": "file", "目錄": "directory dir",
	"讀取": "read", "寫入": "write", "請求": "request", "回應": "response", "錯誤": "error err",
	"伺服器": "server", "用戶端": "client", "網路": "network net", "執行緒": "thread",
	"記憶體": "memory", "解碼": "decode", "編碼": "encode encoding",
}

// maxGlossaryRunes is the length in characters of the longest glossary
// term.
var maxGlossaryRunes = func() int {
	n := 0
	for k := range glossary {
		n = max(n, utf8.RuneCountInString(k))
	}
	return n
}()

// glossaryWords returns the English words of the glossary terms q holds
// in its CJK text, matching the longest term first at each place ("读写锁"
// as one term, not "读", "写" and "锁"), joined by spaces; "" when none.
func glossaryWords(q string) string {
	var out []string
	var ends []int // where the 1st, 2nd, … character from i ends
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		if !isCJK(r) {
			i += size
			continue
		}
		ends = ends[:0]
		for end := i; end < len(q) && len(ends) < maxGlossaryRunes; {
			r, s := utf8.DecodeRuneInString(q[end:])
			if !isCJK(r) {
				break
			}
			end += s
			ends = append(ends, end)
		}
		next := i + size
		for k := len(ends) - 1; k >= 0; k-- {
			if w, ok := glossary[q[i:ends[k]]]; ok {
				out = append(out, w)
				next = ends[k]
				break
			}
		}
		i = next
	}
	return strings.Join(out, " ")
}
