// Floor for B13 (a[i] = v, 65536 random rows of 256 f32 into f32[100000, 256]) on one thread.
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#define ROWS 100000
#define N 65536
#define COLS 256
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static void row_nt(float*d,const float*s){for(int k=0;k<COLS;k+=4)_mm_stream_ps(d+k,_mm_loadu_ps(s+k));}
int main(){
  float*a=aligned_alloc(64,(size_t)ROWS*COLS*4),*x=aligned_alloc(64,(size_t)ROWS*COLS*4),*v=aligned_alloc(64,(size_t)N*COLS*4);
  int64_t*idx=malloc(N*8);uint64_t s=12345;
  for(size_t k=0;k<(size_t)ROWS*COLS;k++)a[k]=k;for(size_t k=0;k<(size_t)N*COLS;k++)v[k]=k;
  for(int k=0;k<N;k++){s=s*6364136223846793005ULL+1442695040888963407ULL;idx[k]=(s>>33)%ROWS;}
  char*cs=malloc((size_t)N*COLS*4),*cd=malloc((size_t)N*COLS*4);memset(cs,1,(size_t)N*COLS*4);memset(cd,0,(size_t)N*COLS*4);
  double best[4]={1e9,1e9,1e9,1e9};
  for(int r=0;r<25;r++){
    double t;
    memcpy(x,a,(size_t)ROWS*COLS*4);t=now();for(int k=0;k<N;k++)memcpy(x+idx[k]*COLS,v+(size_t)k*COLS,COLS*4);t=now()-t;if(t<best[0])best[0]=t;
    memcpy(x,a,(size_t)ROWS*COLS*4);t=now();for(int k=0;k<N;k++)row_nt(x+idx[k]*COLS,v+(size_t)k*COLS);_mm_sfence();t=now()-t;if(t<best[1])best[1]=t;
    memcpy(x,a,(size_t)ROWS*COLS*4);t=now();for(int k=0;k<N;k++){if(k+2<N)for(int l=0;l<COLS;l+=16)_mm_prefetch((const char*)(x+idx[k+2]*COLS+l),_MM_HINT_ET0);memcpy(x+idx[k]*COLS,v+(size_t)k*COLS,COLS*4);}t=now()-t;if(t<best[2])best[2]=t;
    t=now();memcpy(cd,cs,(size_t)N*COLS*4);t=now()-t;if(t<best[3])best[3]=t;
  }
  printf("min of 25 (ms): memcpy-per-row %.2f  nt-per-row %.2f  prefetchw+memcpy %.2f  memcpy-64MiB %.2f  ratios %.2f %.2f %.2f\n",best[0]*1e3,best[1]*1e3,best[2]*1e3,best[3]*1e3,best[0]/best[3],best[1]/best[3],best[2]/best[3]);
  return x[5]==12345;
}
