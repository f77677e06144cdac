package rig

// The Go binding over memory devices (MEM:n stand for GPUs), files and the
// rigd that RIG_SERVICE names.  Rules asserted through the binding:
// COPY-77 (copy), HACC-01 (host access in place), HACC-04 (a failing
// access propagates), HACC-10 (whole elements), BUF-44 (views).

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"unsafe"
)

func pattern(n int) []byte {
	p := make([]byte, n)
	for i := range p {
		p[i] = byte(i*31 + 7)
	}
	return p
}

// must is v, or a panic (a failed test) with err.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func TestBytesRoundTripThroughDeviceMemory(t *testing.T) {
	mem := must(Open("MEM:0"))
	sent := pattern(1 << 20)
	onMem := must(NewBuffer(mem, int64(len(sent)), MemoryDevice))
	defer onMem.Close()
	if err := onMem.CopyFrom(sent, 0); err != nil {
		t.Fatal(err)
	}
	back := must(NewBuffer(Host(), onMem.Len(), MemoryDevice))
	defer back.Close()
	p := must(SubmitCopy(onMem, back))
	if err := p.Wait(); err != nil {
		t.Fatal(err)
	}
	var same bool
	if err := back.Read(func(b []byte) { same = bytes.Equal(b, sent) }); err != nil || !same {
		t.Fatalf("the bytes came back changed (%v)", err)
	}
	view := must(onMem.View(4096, 16))
	defer view.Close()
	got := make([]byte, 16)
	if err := view.CopyTo(got, 0); err != nil || !bytes.Equal(got, sent[4096:4112]) {
		t.Fatalf("the view holds %v (%v)", got, err)
	}
}

func TestHostAccessLendsSlicesInPlace(t *testing.T) {
	b := must(NewBuffer(must(Open("MEM:1")), 1024*4, MemoryDevice))
	defer b.Close()
	address := b.HostAddress()
	if err := b.WriteFloat32s(func(v []float32) {
		if uintptr(unsafe.Pointer(&v[0])) != address {
			t.Error("host access copies")
		}
		for i := range v {
			v[i] = float32(i)
		}
	}); err != nil {
		t.Fatal(err)
	}
	var sum float64
	if err := b.ReadFloat32s(func(v []float32) {
		for _, x := range v {
			sum += float64(x)
		}
	}); err != nil || sum != 1023*1024/2 {
		t.Fatalf("sum %v (%v)", sum, err)
	}
	odd := must(NewBuffer(Host(), 6, MemoryDevice))
	defer odd.Close()
	if err := odd.ReadFloat32s(func([]float32) {}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("6 bytes as float32s: %v", err)
	}
}

func TestAPanicInHostAccessReachesTheCaller(t *testing.T) {
	b := must(NewBuffer(Host(), 64, MemoryDevice))
	defer b.Close()
	func() {
		defer func() {
			if recover() != "from the closure" {
				t.Error("the panic was lost")
			}
		}()
		b.Read(func([]byte) { panic("from the closure") })
	}()
	if err := b.Fill(1); err != nil {
		t.Fatalf("the buffer after the panic: %v", err)
	}
}

func TestErrorsCarryTheMessageAndNumbers(t *testing.T) {
	mem := must(Open("MEM:0"))
	a := must(NewBuffer(mem, 4096, MemoryDevice))
	defer a.Close()
	b := must(NewBuffer(mem, 2048, MemoryDevice))
	defer b.Close()
	err := Copy(a, b)
	var e *Error
	if !errors.As(err, &e) || e.Status != StatusInvalid || !strings.Contains(e.Message, "4096") ||
		!strings.Contains(e.Message, "2048") {
		t.Fatalf("copy of 4096 bytes into 2048: %v", err)
	}
	if _, err := Open("NOSUCH:0"); err == nil {
		t.Fatal("NOSUCH:0 opened")
	}
	// The error is read on the failing thread, whatever goroutines run
	// meanwhile: many goroutines failing at once each get their own.
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, err := NewBuffer(mem, -int64(i)-1, MemoryDevice)
			if !errors.Is(err, ErrInvalid) || err.(*Error).Message == "" {
				t.Errorf("goroutine %d: %v", i, err)
			}
		}(i)
	}
	wg.Wait()
}

func TestCloseTwiceAndUseAfterClose(t *testing.T) {
	b := must(NewBuffer(Host(), 64, MemoryDevice))
	b.Close()
	b.Close()
	if err := b.Fill(0); !errors.Is(err, ErrInvalid) {
		t.Fatalf("fill after close: %v", err)
	}
}

func TestFinalizersReleaseForgottenBuffers(t *testing.T) {
	mem := must(Open("MEM:2"))
	defer mem.SetBudget(math.MaxInt64)
	before := mem.Allocated()
	for i := 0; i < 64; i++ {
		must(NewBuffer(mem, 1<<16, MemoryDevice))
	}
	for i := 0; i < 20 && mem.Allocated() > before+(1<<16)*8; i++ {
		runtime.GC()
		runtime.Gosched()
	}
	// Released memory is collected into the cache, which still counts;
	// free it to see what the live buffers hold.
	_ = mem.SetBudget(before + (1 << 16))
	if mem.Allocated() > before+(1<<16) {
		t.Fatalf("forgotten buffers hold %d bytes", mem.Allocated()-before)
	}
}

func TestLoadFromAReaderAndAFile(t *testing.T) {
	mem := must(Open("MEM:0"))
	sent := pattern(9<<20 + 123)
	b := must(Load(bytes.NewReader(sent), mem, int64(len(sent))))
	defer b.Close()
	got := make([]byte, len(sent))
	if err := b.CopyTo(got, 0); err != nil || !bytes.Equal(got, sent) {
		t.Fatalf("Load from a reader: %v", err)
	}
	if _, err := Load(bytes.NewReader(sent[:10]), mem, 20); err == nil {
		t.Fatal("a short reader loaded")
	}
	path := filepath.Join(t.TempDir(), "weights.bin")
	if err := os.WriteFile(path, sent, 0o600); err != nil {
		t.Fatal(err)
	}
	f := must(LoadFile(path, mem))
	defer f.Close()
	if err := f.CopyTo(got, 0); err != nil || !bytes.Equal(got, sent) {
		t.Fatalf("LoadFile: %v", err)
	}
}

func TestABufferSavesIntoADurableFile(t *testing.T) {
	mem := must(Open("MEM:0"))
	sent := pattern(1 << 20)
	b := must(NewBuffer(mem, int64(len(sent)), MemoryDevice))
	defer b.Close()
	if err := b.CopyFrom(sent, 0); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "checkpoint.bin")
	if err := SaveFile(b, path); err != nil {
		t.Fatalf("SaveFile: %v", err)
	}
	if written, err := os.ReadFile(path); err != nil || !bytes.Equal(written, sent) {
		t.Fatalf("the saved file holds other bytes than the buffer (%v)", err)
	}
	readOnly := must(OpenFile(path, 0, -1))
	defer readOnly.Close()
	if err := SyncFile(readOnly); err == nil {
		t.Fatal("a read-only file synced")
	}
}

func TestABufferSharesThroughRigd(t *testing.T) {
	socket := os.Getenv("RIG_SERVICE")
	if socket == "" {
		t.Fatal("RIG_SERVICE names no rigd")
	}
	m := must(Connect(socket))
	proxy := must(m.Open("MEM:0"))
	b := must(NewBuffer(proxy, 1<<16, MemoryDevice))
	defer b.Close()
	sent := pattern(1 << 16)
	if err := b.CopyFrom(sent, 0); err != nil {
		t.Fatal(err)
	}
	token := must(b.Share())
	imported := must(Import(proxy, token))
	defer imported.Close()
	got := make([]byte, len(sent))
	if err := imported.CopyTo(got, 0); err != nil || !bytes.Equal(got, sent) {
		t.Fatalf("the import holds other bytes (%v)", err)
	}
}
