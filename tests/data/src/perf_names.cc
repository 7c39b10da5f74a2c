// A C++ program for `sfview perf`'s names against `perf script`'s (tests/oracles/test_perf_cxx.py): work in
// functions whose names have what C++ names have, each hot enough to be sampled: an ABI tag (a function
// returning a std::string: `label[abi:cxx11]`), a function template, a class template's member, a lambda, an
// operator, a function in an anonymous namespace, and functions inlined into them (a template, which has a
// linkage name, and a static function, which has none).
#include <cstdlib>
#include <string>
#include <vector>

namespace {
__attribute__((noinline)) unsigned long churn(unsigned long x, int n) {
    for (int i = 0; i < n; i++) x = (x ^ (x >> 13)) * 0x9e3779b97f4a7c15UL;
    return x;
}
}  // namespace

namespace shapes {
struct Vec {
    unsigned long a, b;
};

__attribute__((noinline)) Vec operator+(Vec x, Vec y) { return {churn(x.a + y.a, 200), x.b ^ y.b}; }

template <typename T>
__attribute__((always_inline)) inline T twist(T t, int i) {  // inlined into Box<T>::stir
    return t * 31 + static_cast<T>(i);
}

template <typename T>
struct Box {
    T held;
    __attribute__((noinline)) T stir(int n) {
        T t = held;
        for (int i = 0; i < n; i++) t = twist(t, i);
        return t;
    }
};

template <typename T>
__attribute__((noinline)) T mixed(T x, int n) {
    return static_cast<T>(churn(static_cast<unsigned long>(x), n));
}

static inline unsigned long fold(unsigned long x) {  // inlined into label
    for (int i = 0; i < 64; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    return x;
}

__attribute__((noinline)) std::string label(unsigned long n) {
    return std::string(1, static_cast<char>('a' + fold(n) % 26));
}
}  // namespace shapes

int main(int argc, char **argv) {
    long rounds = argc > 1 ? std::atol(argv[1]) : 1000;
    unsigned long total = 0;
    auto step = [&total](unsigned long i) __attribute__((noinline)) {
        for (int k = 0; k < 100; k++) total = total * 3 + i + static_cast<unsigned long>(k);
        return total;
    };
    shapes::Box<unsigned int> box{7};
    std::vector<std::string> labels;
    for (long r = 0; r < rounds; r++) {
        shapes::Vec v = shapes::Vec{total, 1} + shapes::Vec{static_cast<unsigned long>(r), 2};
        total += v.a + step(static_cast<unsigned long>(r)) + box.stir(300);
        total += shapes::mixed<long>(r, 300) + shapes::mixed<unsigned char>(static_cast<unsigned char>(r), 100);
        total += shapes::label(total)[0];
    }
    return total == 42;
}
