// flat_index: the index for_each passes, as a type a kernel can name instead
// of std::int64_t. It converts to and from std::int64_t, so a kernel computes
// with it as with any integer; what it adds is for CUDA's 16-byte path.
//
//     for_each(tag, out.size(), [=] SWITCHYARD_HOST_DEVICE (Tag, switchyard::flat_index i) {
//         out[i] = f(in[i]);
//     });
//
// When a CUDA kernel's functor takes a flat_index, each thread of for_each's
// kernel runs chunks of consecutive indices (a chunk: 16 bytes of the tag's
// smallest dtype) and hands every index a lane_context that the kernel owns.
// A contiguous flat view indexed by exactly that index (not by arithmetic on
// it, which yields a plain integer) then reads its chunk with 16-byte loads,
// and collects the chunk's writes, which the kernel stores after the chunk,
// 16 bytes at a time when every element was written and element by element
// otherwise. A view finds its slot by its own address and its chunk's: for
// views the functor captured, both are the same at every index of the chunk,
// the compiler folds the lookups, and the context is registers (one 16-byte
// load per input view and one 16-byte store per output view and chunk).
//
// Why the index carries it: a view is captured by value when the kernel is
// built and cannot learn that it runs inside for_each's kernel any other
// way; a view that buffered writes on its own would lose them wherever
// nothing flushes it (a user's own kernel). A flat_index that a user makes
// from an integer has no context, and views then access memory directly.
//
// Element by element instead, and correct: a chunk that is not aligned to its
// size (or 16 bytes) or runs past its view's end (out of line), elements of
// more than 8 bytes, views beyond the 4 input and 4 output slots, strided and
// ranked views. Contract, beyond input views' (load.h: memory read through an
// input view is not written at other indices by the same kernel): two output
// views of one kernel do not overlap, and a copy of an output view made
// inside the functor (a helper taking it by value) is another view; within
// one kernel an output element is accessed through the flat_index or through
// integers, not both. out[i] is a lane_ref: it reads, assigns and
// compound-assigns like a reference, but `auto v = out[i]` keeps the proxy
// (write `T v = out[i]`), and `&out[i]` is not the element's address.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

#include "switchyard/core/config.h"
#include "switchyard/view/load.h"

namespace switchyard {

namespace detail {
template <int Lanes>
struct lane_context;
// Converts to flat_index but not to an integer: lets for_each ask whether a
// functor takes a flat_index (device/cuda/for_each.h).
struct flat_index_probe {};
}  // namespace detail

class flat_index {
public:
    flat_index() = default;
    SWITCHYARD_HOST_DEVICE constexpr flat_index(std::int64_t i) noexcept : value_(i) {}
    SWITCHYARD_HOST_DEVICE constexpr flat_index(detail::flat_index_probe) noexcept {}
    SWITCHYARD_HOST_DEVICE constexpr operator std::int64_t() const noexcept { return value_; }
    SWITCHYARD_HOST_DEVICE constexpr std::int64_t value() const noexcept { return value_; }

    // For for_each's CUDA kernel: index i, lane `lane` of a chunk of Lanes
    // indices whose context is `lanes`.
    template <int Lanes>
    SWITCHYARD_HOST_DEVICE static flat_index in_chunk(std::int64_t i, detail::lane_context<Lanes>* lanes,
                                                      int lane) noexcept {
        flat_index index(i);
        index.lanes_ = lanes;
        index.lane_count_ = Lanes;
        index.lane_ = lane;
        return index;
    }

    // Calls op(context, lane) with the chunk's lane_context<Lanes> and returns
    // what it returns; false outside for_each's CUDA chunk loop. Inlined,
    // the lane count is a constant and only one case remains.
    template <typename Op>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE bool with_lanes(Op op) const noexcept {
        switch (lane_count_) {
            case 1: return op(*static_cast<detail::lane_context<1>*>(lanes_), lane_);
            case 2: return op(*static_cast<detail::lane_context<2>*>(lanes_), lane_);
            case 4: return op(*static_cast<detail::lane_context<4>*>(lanes_), lane_);
            case 8: return op(*static_cast<detail::lane_context<8>*>(lanes_), lane_);
            case 16: return op(*static_cast<detail::lane_context<16>*>(lanes_), lane_);
            default: return false;
        }
    }

private:
    std::int64_t value_ = 0;
    void* lanes_ = nullptr;
    int lane_count_ = 0;
    int lane_ = 0;
};

namespace detail {

// Copies `bytes` (1, 2, 4, 8 or 16: a power of two the address is aligned
// to) at once, with a read-only load when ReadOnly.
template <bool ReadOnly>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE void load_piece(unsigned char* to, unsigned char const* from,
                                                         int bytes) noexcept {
#if defined(__CUDA_ARCH__)
    if (bytes == 16) {
        uint4 const v = ReadOnly ? __ldg(reinterpret_cast<uint4 const*>(from)) : *reinterpret_cast<uint4 const*>(from);
        __builtin_memcpy(to, &v, 16);
    } else if (bytes == 8) {
        uint2 const v = ReadOnly ? __ldg(reinterpret_cast<uint2 const*>(from)) : *reinterpret_cast<uint2 const*>(from);
        __builtin_memcpy(to, &v, 8);
    } else if (bytes == 4) {
        unsigned const v =
            ReadOnly ? __ldg(reinterpret_cast<unsigned const*>(from)) : *reinterpret_cast<unsigned const*>(from);
        __builtin_memcpy(to, &v, 4);
    } else if (bytes == 2) {
        unsigned short const v = ReadOnly ? __ldg(reinterpret_cast<unsigned short const*>(from))
                                          : *reinterpret_cast<unsigned short const*>(from);
        __builtin_memcpy(to, &v, 2);
    } else {
        *to = *from;
    }
#else
    std::memcpy(to, from, static_cast<std::size_t>(bytes));
#endif
}

SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE void store_piece(unsigned char* to, unsigned char const* from,
                                                          int bytes) noexcept {
#if defined(__CUDA_ARCH__)
    // In PTX: a uint4 assignment would reach memory as four 4-byte stores
    // once its fields are registers.
    unsigned w[4] = {};
    __builtin_memcpy(w, from, bytes < 16 ? bytes : 16);
    if (bytes == 16)
        asm volatile("st.global.v4.u32 [%0], {%1, %2, %3, %4};" ::"l"(to), "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3])
                     : "memory");
    else if (bytes == 8)
        asm volatile("st.global.v2.u32 [%0], {%1, %2};" ::"l"(to), "r"(w[0]), "r"(w[1]) : "memory");
    else if (bytes == 4)
        asm volatile("st.global.u32 [%0], %1;" ::"l"(to), "r"(w[0]) : "memory");
    else if (bytes == 2)
        asm volatile("st.global.u16 [%0], %1;" ::"l"(to), "h"(static_cast<unsigned short>(w[0])) : "memory");
    else
        *to = *from;
#else
    std::memcpy(to, from, static_cast<std::size_t>(bytes));
#endif
}

// A chunk's bytes as a value: the slow paths below take and return it by
// value, so that calling them does not make a lane_context leave registers.
template <int Bytes>
struct chunk_bytes {
    alignas(16) unsigned char bytes[Bytes];
};

// A chunk that is not aligned to its size or 16 bytes, or that runs past
// its view's end: element by element, and only inside the view. Out of line,
// so that the rare case costs the common one a branch and nothing more.
template <int Lanes, bool ReadOnly, typename T>
SWITCHYARD_HOST_DEVICE SWITCHYARD_NOINLINE chunk_bytes<Lanes * sizeof(T)> load_chunk_elementwise(
    T const* data, std::int64_t first, std::int64_t size) noexcept {
    chunk_bytes<Lanes * sizeof(T)> chunk{};
    for (int k = 0; k < Lanes && first + k < size; ++k) {
        T const v = ReadOnly ? load_input(data + first + k) : data[first + k];
        std::memcpy(chunk.bytes + k * sizeof(T), &v, sizeof(T));
    }
    return chunk;
}

template <int Lanes, int ElementBytes>
SWITCHYARD_HOST_DEVICE SWITCHYARD_NOINLINE void store_chunk_elementwise(unsigned char* to,
                                                                        chunk_bytes<Lanes * ElementBytes> chunk,
                                                                        std::uint32_t written) noexcept {
    for (int k = 0; k < Lanes; ++k)
        if (written >> k & 1u) std::memcpy(to + k * ElementBytes, chunk.bytes + k * ElementBytes, ElementBytes);
}

// A compile-time int usable in device code without nvcc's
// --expt-relaxed-constexpr (std::integral_constant's conversion is a host
// function there).
template <int K>
struct index_constant {
    static constexpr int value = K;
    SWITCHYARD_HOST_DEVICE constexpr operator int() const noexcept { return K; }
};

// Calls f(index_constant<K>) for K = 0 .. N-1, unrolled in the source: every
// offset is a constant before the compiler sees a loop, which is what lets
// it keep a lane_context in registers.
template <int N, typename F>
SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE void unrolled(F&& f) noexcept {
    [&]<int... K>(std::integer_sequence<int, K...>) { (f(index_constant<K>{}), ...); }
    (std::make_integer_sequence<int, N>{});
}

// One chunk of Lanes indices: the loads and stores of the contiguous views
// that the functor indexes with its flat_index, one slot per view. A slot
// is chosen by the view's own address, which is a constant once the functor
// is inlined (its closure is the kernel's parameter), never by where the
// data is: so which slot a view uses, and which lanes it wrote, are known to
// the compiler and the context is registers. The slot's chunk is compared
// too, and a different one (another view at the same address, as a copy in
// a loop variable) goes element by element without touching the slots. Only
// how a chunk moves is decided at run time: 16 bytes at a time, or element
// by element, out of line, when the chunk is not aligned to its size (or 16
// bytes), runs past the view's end, or not every lane was written.
template <int Lanes>
struct lane_context {
    static constexpr int slots = 4;              // views per kind; more go element by element
    static constexpr int max_bytes = Lanes * 8;  // elements of up to 8 bytes

    struct load_slot {
        void const* view;
        unsigned char const* chunk;
        alignas(16) unsigned char bytes[max_bytes];
    };
    struct store_slot {
        void const* view;
        unsigned char* chunk;
        std::uint32_t written;  // one bit per lane
        int element_bytes;
        alignas(16) unsigned char bytes[max_bytes];
    };

    std::int64_t first = 0;  // the chunk's first index
    int load_count = 0;
    int store_count = 0;
    load_slot loads[slots];
    store_slot stores[slots];

    // Lane `lane` of the chunk of view `view` (`size` elements at `data`),
    // read-only (ld.global.nc, load.h) for input views; false when every
    // slot is taken (the caller then loads the element itself).
    template <bool ReadOnly, typename T>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE bool load(void const* view, T const* data, std::int64_t size, int lane,
                                                       T& value) noexcept {
        if constexpr (Lanes * sizeof(T) > max_bytes)
            return false;
        else
            return load_from<0, ReadOnly>(view, data, size, lane, value);
    }

    // Records lane `lane` of output view `view`; false when every slot is
    // taken (the caller then stores the element itself).
    template <typename T>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE bool store(void const* view, T* data, int lane, T const& value) noexcept {
        if constexpr (Lanes * sizeof(T) > max_bytes)
            return false;
        else
            return store_into<0>(view, data, lane, value);
    }

    // Lane `lane` of output view `view` when this chunk wrote it. Sets
    // `direct` when the view's writes go straight to memory (every store
    // slot is taken by other views): it must then be read from memory too.
    template <typename T>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE bool written(void const* view, T* data, int lane, T& value,
                                                          bool& direct) const noexcept {
        direct = false;
        return read_written<0>(view, reinterpret_cast<unsigned char*>(data + first), lane, value, direct);
    }

    // Stores every recorded write.
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE void flush() noexcept {
        unrolled<slots>([&](auto s) {
            if (s < store_count) {
                switch (stores[s].element_bytes) {
                    case 1: flush_slot<1>(stores[s]); break;
                    case 2: flush_slot<2>(stores[s]); break;
                    case 4: flush_slot<4>(stores[s]); break;
                    case 8: flush_slot<8>(stores[s]); break;
                    default: break;
                }
            }
        });
    }

private:
    template <int Bytes>
    static constexpr int piece = Bytes < 16 ? Bytes : 16;

    template <int Bytes>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE static bool aligned(unsigned char const* chunk) noexcept {
        return (reinterpret_cast<std::uintptr_t>(chunk) & std::uintptr_t{piece<Bytes> - 1}) == 0;
    }

    template <int S, bool ReadOnly, typename T>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE bool load_from(void const* view, T const* data, std::int64_t size,
                                                            int lane, T& value) noexcept {
        if constexpr (S == slots) {
            return false;
        } else {
            constexpr int bytes = Lanes * static_cast<int>(sizeof(T));
            load_slot& slot = loads[S];
            auto const* chunk = reinterpret_cast<unsigned char const*>(data + first);
            if (S == load_count) {
                slot.view = view;
                slot.chunk = chunk;
                load_count = S + 1;
                if (first + Lanes <= size && aligned<bytes>(chunk)) {
                    unrolled<bytes / piece<bytes>>([&](auto p) {
                        load_piece<ReadOnly>(slot.bytes + p * piece<bytes>, chunk + p * piece<bytes>, piece<bytes>);
                    });
                } else {
                    chunk_bytes<bytes> const loaded = load_chunk_elementwise<Lanes, ReadOnly>(data, first, size);
                    std::memcpy(slot.bytes, loaded.bytes, bytes);
                }
            } else if (S > load_count || slot.view != view) {
                return load_from<S + 1, ReadOnly>(view, data, size, lane, value);
            } else if (slot.chunk != chunk) {
                // Another view at this view's address (a copy in a loop
                // variable): element by element, leaving the slots as they are.
                return false;
            }
            std::memcpy(&value, slot.bytes + lane * sizeof(T), sizeof(T));
            return true;
        }
    }

    template <int S, typename T>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE bool store_into(void const* view, T* data, int lane,
                                                             T const& value) noexcept {
        if constexpr (S == slots) {
            return false;
        } else {
            store_slot& slot = stores[S];
            auto* const chunk = reinterpret_cast<unsigned char*>(data + first);
            if (S == store_count) {
                slot.view = view;
                slot.chunk = chunk;
                slot.written = 0;
                slot.element_bytes = static_cast<int>(sizeof(T));
                store_count = S + 1;
            } else if (S > store_count || slot.view != view) {
                return store_into<S + 1>(view, data, lane, value);
            } else if (slot.chunk != chunk) {
                return false;  // another view at this address: element by element
            }
            std::memcpy(slot.bytes + lane * sizeof(T), &value, sizeof(T));
            slot.written |= 1u << lane;
            return true;
        }
    }

    template <int S, typename T>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE bool read_written(void const* view, unsigned char const* chunk, int lane,
                                                               T& value, bool& direct) const noexcept {
        if constexpr (S == slots) {
            direct = true;  // no slot of its own and none free: written element by element
            return false;
        } else {
            store_slot const& slot = stores[S];
            if (S >= store_count) return false;
            if (slot.view != view) return read_written<S + 1>(view, chunk, lane, value, direct);
            if (slot.chunk != chunk) {
                direct = true;  // another view at this address, written element by element
                return false;
            }
            if ((slot.written >> lane & 1u) == 0) return false;
            std::memcpy(&value, slot.bytes + lane * sizeof(T), sizeof(T));
            return true;
        }
    }

    template <int ElementBytes>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE void flush_slot(store_slot& slot) noexcept {
        constexpr int bytes = Lanes * ElementBytes;
        constexpr std::uint32_t all = Lanes == 32 ? ~0u : (1u << Lanes) - 1u;
        if (slot.written == all && aligned<bytes>(slot.chunk)) {
            unrolled<bytes / piece<bytes>>([&](auto p) {
                store_piece(slot.chunk + p * piece<bytes>, slot.bytes + p * piece<bytes>, piece<bytes>);
            });
        } else if (slot.written != 0) {
            chunk_bytes<bytes> recorded;
            std::memcpy(recorded.bytes, slot.bytes, bytes);
            store_chunk_elementwise<Lanes, ElementBytes>(slot.chunk, recorded, slot.written);
        }
    }
};

// What a writable contiguous CUDA flat view returns for out[i] with a
// flat_index: reads and writes go through the lane context when there is one
// (in for_each's CUDA chunk loop), straight to memory otherwise.
template <typename T>
class lane_ref {
public:
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE lane_ref(void const* view, T* data, std::int64_t size,
                                                      flat_index i) noexcept
        : view_(view), data_(data), size_(size), index_(i) {}

    // The element: what this chunk wrote to it, else memory (a lane of the
    // chunk, loaded 16 bytes at a time as for an input view but coherently).
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE operator T() const noexcept {
#if defined(__CUDA_ARCH__)
        T value;
        if (index_.with_lanes([&](auto& lanes, int lane) {
                bool direct = false;
                return lanes.written(view_, data_, lane, value, direct) ||
                       (!direct && lanes.template load<false>(view_, data_, size_, lane, value));
            }))
            return value;
#endif
        return data_[index_.value()];
    }
    // static_cast<float>(out[i]) for a 2-byte T, which converts to float
    // with a conversion of its own.
    template <typename U>
    requires(!std::is_same_v<U, T> && requires(T t) { static_cast<U>(t); }) SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE
        explicit
        operator U() const noexcept {
        return static_cast<U>(static_cast<T>(*this));
    }

    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE lane_ref const& operator=(T const& value) const noexcept {
#if defined(__CUDA_ARCH__)
        if (index_.with_lanes([&](auto& lanes, int lane) { return lanes.store(view_, data_, lane, value); }))
            return *this;
#endif
        data_[index_.value()] = value;
        return *this;
    }
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE lane_ref const& operator=(lane_ref const& other) const noexcept {
        return *this = static_cast<T>(other);
    }

    // From another element: lane_ref<half> to a float view converts twice.
    template <typename U>
    SWITCHYARD_HOST_DEVICE SWITCHYARD_INLINE lane_ref const& operator=(lane_ref<U> const& other) const noexcept {
        return *this = static_cast<T>(static_cast<U>(other));
    }

    template <typename U>
    SWITCHYARD_HOST_DEVICE lane_ref const& operator+=(U const& u) const noexcept {
        return *this = static_cast<T>(static_cast<T>(*this) + u);
    }
    template <typename U>
    SWITCHYARD_HOST_DEVICE lane_ref const& operator-=(U const& u) const noexcept {
        return *this = static_cast<T>(static_cast<T>(*this) - u);
    }
    template <typename U>
    SWITCHYARD_HOST_DEVICE lane_ref const& operator*=(U const& u) const noexcept {
        return *this = static_cast<T>(static_cast<T>(*this) * u);
    }
    template <typename U>
    SWITCHYARD_HOST_DEVICE lane_ref const& operator/=(U const& u) const noexcept {
        return *this = static_cast<T>(static_cast<T>(*this) / u);
    }
    template <typename U>
    SWITCHYARD_HOST_DEVICE lane_ref const& operator%=(U const& u) const noexcept {
        return *this = static_cast<T>(static_cast<T>(*this) % u);
    }
    template <typename U>
    SWITCHYARD_HOST_DEVICE lane_ref const& operator&=(U const& u) const noexcept {
        return *this = static_cast<T>(static_cast<T>(*this) & u);
    }
    template <typename U>
    SWITCHYARD_HOST_DEVICE lane_ref const& operator|=(U const& u) const noexcept {
        return *this = static_cast<T>(static_cast<T>(*this) | u);
    }
    template <typename U>
    SWITCHYARD_HOST_DEVICE lane_ref const& operator^=(U const& u) const noexcept {
        return *this = static_cast<T>(static_cast<T>(*this) ^ u);
    }
    template <typename U>
    SWITCHYARD_HOST_DEVICE lane_ref const& operator<<=(U const& u) const noexcept {
        return *this = static_cast<T>(static_cast<T>(*this) << u);
    }
    template <typename U>
    SWITCHYARD_HOST_DEVICE lane_ref const& operator>>=(U const& u) const noexcept {
        return *this = static_cast<T>(static_cast<T>(*this) >> u);
    }
    SWITCHYARD_HOST_DEVICE lane_ref const& operator++() const noexcept { return *this += 1; }
    SWITCHYARD_HOST_DEVICE lane_ref const& operator--() const noexcept { return *this -= 1; }

private:
    void const* view_;
    T* data_;
    std::int64_t size_;
    flat_index index_;
};

}  // namespace detail

}  // namespace switchyard
